"""A new record is to be explained: the lowest value in decades is never "no root cause to find",
even when the move into it was of an ordinary size; a trending series' routine records are no news."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from investigator.analysis.movement import movement, window_value
from investigator.analysis.records import level_record

from ..analysis.helpers import spec as day_spec
from ..planners.test_real_shapes import kinds, run


def yearly(values: dict[str, np.ndarray], start: int = 1950) -> pd.DataFrame:
    n = len(next(iter(values.values())))
    years = pd.to_datetime([f"{start + i}-01-01" for i in range(n)])
    return pd.concat([pd.DataFrame({"year": years, "league": k, "runs": v}) for k, v in values.items()])


def test_a_record_low_reached_by_an_ordinary_fall_is_explained_not_called_normal(tmp_path: Path) -> None:
    """Forty years of two leagues swinging 4% a year around a flat level; in the last year one
    league falls 45 runs (an ordinary move for this history) and takes the total below every
    earlier year: the report names the league, and says it is a record."""
    rng = np.random.default_rng(5)
    east, west = 1000 * (1 + rng.normal(0, 0.04, 40)), 1000 * (1 + rng.normal(0, 0.04, 40))
    low = float((east + west)[:20].min())  # the low was set long ago ...
    east[20:38], west[20:38] = np.maximum(east[20:38], low / 2 + 10), np.maximum(west[20:38], low / 2 + 10)
    east[-2], west[-2] = (low + 15) / 2, (low + 15) / 2  # ... and approached, not reached, last year
    east[-1], west[-1] = east[-2] - 45, west[-2]  # east falls 45 (4.6%); the total 30 below every year
    rep = run(tmp_path, yearly({"east": east, "west": west}), "runs", date(1989, 12, 31), window="1y",
              time_column="year")  # fmt: skip
    assert rep.movement is not None and rep.movement.significant is False  # an ordinary-sized move
    assert kinds(rep)[0] == "segment_change" and rep.root_causes[0].segment == {"league": "east"}
    assert "It is the lowest value in 40 windows" in rep.conclusion


def test_a_trending_series_sets_records_that_are_no_news() -> None:
    """A series that rises 1% a month sets a new high every month: the current high is no record."""
    days = pd.date_range(end="2026-03-29", periods=7 * 60, freq="D")
    trend = pd.DataFrame({"date": days.date, "revenue": np.linspace(100, 200, len(days)), "rows": 10})
    s = day_spec()
    assert window_value(trend, s, s.current) > window_value(trend, s, s.baseline)
    assert level_record(trend, s, window_value) == 0
    flat = trend.assign(revenue=100.0 + np.sin(np.arange(len(days))))
    flat.loc[flat.index[-7:], "revenue"] = 80.0  # the last week the lowest of 60
    assert level_record(flat, s, window_value) == 59
    assert movement(flat, s).level_record == 59
