"""`movements` scores many series at once exactly as `movement` scores each alone: same windows,
same history of earlier changes, same verdict, on data of every grain and on series that start
late, stop early or skip periods."""

from __future__ import annotations

import math
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.history import dimension_history
from investigator.analysis.movement import Movement, movement, movements
from investigator.config import MetricDefinition
from investigator.request import Request
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate, generate_shaped


def _one_by_one(frame: pd.DataFrame, spec: Any, key: str) -> dict[Any, Movement]:
    n = spec.numerator
    return {
        value: movement(df[["date", n]].sort_values("date").reset_index(drop=True), spec)
        for value, df in frame.groupby(key)
    }


def _same(a: Movement, b: Movement) -> None:
    assert a.significant == b.significant and a.history_points == b.history_points
    fields = ("current", "baseline", "change", "change_pct", "z", "history_median_pct", "history_spread_pct")
    for field in fields:
        x, y = getattr(a, field), getattr(b, field)
        if x is None or y is None or (isinstance(x, float) and math.isnan(x)):
            assert (x is None and y is None) or (math.isnan(x) and math.isnan(y)), field
        else:
            assert x == pytest.approx(y, rel=1e-9, abs=1e-9), field


def _check(frame: pd.DataFrame, spec: Any, key: str) -> dict[Any, Movement]:
    together, alone = movements(frame, spec, key), _one_by_one(frame, spec, key)
    assert list(together) == list(alone)
    for value in alone:
        _same(together[value], alone[value])
    return together


def _resolved(tmp_path: Path, frame: pd.DataFrame, metric: str, **kw: Any) -> tuple[Any, Any]:
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    return resolve(Request(metric=metric, data=str(path), **kw), path, MetricDefinition(expression=metric))


@pytest.mark.parametrize("window", ["7d", "3d", "14d", "1mo"])
def test_daily_segments_score_as_each_alone(window: str, tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=3, segment={"channel": "email"}, factor=0.4)
    spec, table = _resolved(tmp_path, frame, "revenue", window=window)
    history = dimension_history(table, spec)
    for dim in spec.dimensions:
        got = _check(history.frames[dim].rename(columns={"value": "revenue"}), spec, dim)
        if dim == "channel" and window == "7d":  # the planted segment is far outside its history
            assert got["email"].significant and got["email"].z is not None and got["email"].z < -4


@pytest.mark.parametrize("shape", ["weekly", "monthly", "quarterly", "5-yearly", "irregular"])
def test_segments_at_every_grain_score_as_each_alone(shape: str, tmp_path: Path) -> None:
    frame, truth = generate_shaped(shape, seed=9)
    fields = {"window": truth["window"], "time_column": truth["time_column"]}
    spec, table = _resolved(tmp_path, frame, "value", **fields)
    history = dimension_history(table, spec)
    assert spec.dimensions
    for dim in spec.dimensions:
        _check(history.frames[dim].rename(columns={"value": "value"}), spec, dim)


def test_series_that_start_late_stop_early_or_skip_days(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=4, segment={"channel": "email"}, factor=0.5)
    spec, _ = _resolved(tmp_path, frame, "revenue")
    rng = np.random.default_rng(1)
    days = [spec.current.end - timedelta(days=i) for i in range(120)][::-1]
    rows = []
    for value, (start, stop, gaps) in {
        "steady": (0, 120, 0.0),
        "late": (70, 120, 0.0),  # 50 days of history only
        "gone": (0, 110, 0.0),  # no row in the current window: its value there is nothing, not 0
        "patchy": (0, 120, 0.3),  # missing days count as zero inside its span
        "short": (113, 120, 0.0),  # too little history: the plain threshold decides
    }.items():
        for d in days[start:stop]:
            if rng.random() >= gaps:
                rows.append({"date": d, "k": value, "revenue": float(rng.normal(100, 10))})
    got = _check(pd.DataFrame(rows), spec, "k")
    assert math.isnan(got["gone"].current) and got["late"].history_points < got["steady"].history_points
    assert got["short"].history_points == 0 and got["short"].z is None


def test_a_ratio_metric_is_refused() -> None:
    from investigator.analysis.spec import AnalysisSpec, Window

    spec = AnalysisSpec(
        metric="conversion",
        numerator="orders",
        denominator="visits",
        time_column="date",
        dimensions=["k"],
        current=Window(start=date(2026, 3, 23), end=date(2026, 3, 29)),
        baseline=Window(start=date(2026, 3, 16), end=date(2026, 3, 22)),
    )
    with pytest.raises(ValueError, match="sum metrics"):
        movements(pd.DataFrame({"date": [date(2026, 3, 23)], "k": ["a"], "orders": [1.0]}), spec, "k")
