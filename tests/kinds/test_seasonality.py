"""Seasonality needs evidence: repetition over at least three earlier years, or an earlier move
far outside how ordinary windows move; not a noisy series whose same week happened to fall twice."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from ..planners.test_real_shapes import kinds, run


def weekly(values: np.ndarray, start: str = "2021-01-04") -> pd.DataFrame:
    return pd.DataFrame({"week": pd.date_range(start, periods=len(values), freq="7D"), "sales": values})


def test_a_noisy_weekly_series_whose_same_week_fell_twice_by_chance_is_not_seasonal(tmp_path: Path) -> None:
    """Three years of weekly sales with 12% noise; the same week fell about 14% in both earlier
    years, as noise does now and then, and falls 15% now: the week-on-week history says that is
    ordinary, and two of two years is no evidence of a season."""
    rng = np.random.default_rng(11)
    v = 1000 * (1 + rng.normal(0, 0.12, 156))
    now = 155  # the last week; its baseline is the week before
    for back in (52, 104):
        v[now - back - 1] = 1000.0
        v[now - back] = 860.0  # the same week fell 14% a year and two years earlier
    v[now - 1], v[now] = 1000.0, 850.0
    rep = run(tmp_path, weekly(v), "sales", date(2023, 12, 25), window="1w", time_column="week")
    assert "seasonality" not in kinds(rep), rep.conclusion


def test_a_holiday_dip_a_year_earlier_that_stood_far_outside_ordinary_weeks_is_seasonal(
    tmp_path: Path,
) -> None:
    """A quiet series (2% noise) whose same week dipped 30% a year earlier and dips 30% now: one
    earlier year, but a move no ordinary week makes."""
    rng = np.random.default_rng(12)
    v = 1000 * (1 + rng.normal(0, 0.02, 104))
    for i in (50, 102):
        v[i - 1], v[i] = 1000.0, 700.0
    rep = run(tmp_path, weekly(v[:103]), "sales", date(2022, 12, 25), window="1w", time_column="week")
    assert kinds(rep)[0] == "seasonality", rep.conclusion
