"""The per-dimension history computed once per run answers as the data itself does: the quality
checks and the segments' own histories read it instead of grouping the data again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from investigator.analysis.history import dimension_history
from investigator.analysis.quality import quality_checks
from investigator.analysis.queries import daily_totals, null_labels, period_cube
from investigator.analysis.segments import explain_segments
from investigator.config import MetricDefinition
from investigator.request import Request
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate, generate_shaped


def _resolved(tmp_path: Path, frame: pd.DataFrame, metric: str, **kw: Any) -> tuple[Any, Any]:
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    return resolve(Request(metric=metric, data=str(path), **kw), path, MetricDefinition(expression=metric))


def test_quality_and_movers_from_the_history_are_those_from_the_data(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=7, segment={"channel": "email"}, factor=0.5)
    frame.loc[frame.index % 17 == 0, "country"] = None  # nulls: a segment of their own
    spec, table = _resolved(tmp_path, frame, "revenue")
    daily = daily_totals(table, spec)
    history = dimension_history(table, spec)
    assert history.labels == null_labels(table, spec.dimensions)
    assert quality_checks(table, spec, daily, history) == quality_checks(table, spec, daily)
    cube = period_cube(table, spec, labels=history.labels)
    assert cube.equals(period_cube(table, spec))
    reused = explain_segments(cube, spec, history=history)
    assert reused.movers and reused == explain_segments(cube, spec, table=table)


@pytest.mark.parametrize("shape", ["weekly", "monthly", "quarterly", "5-yearly", "irregular"])
def test_quality_from_the_history_at_any_grain(shape: str, tmp_path: Path) -> None:
    frame, truth = generate_shaped(shape, seed=5, null_share=0.05)
    fields = {"window": truth["window"], "time_column": truth["time_column"]}
    spec, table = _resolved(tmp_path, frame, "value", **fields)
    history = dimension_history(table, spec)
    assert quality_checks(table, spec, history=history) == quality_checks(table, spec)


def test_a_real_value_spelled_null_keeps_its_name_in_the_history(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=8, segment={"channel": "email"}, factor=0.5)
    frame.loc[frame.index % 11 == 0, "channel"] = "null"
    frame.loc[frame.index % 13 == 0, "channel"] = None
    spec, table = _resolved(tmp_path, frame, "revenue")
    history = dimension_history(table, spec)
    assert history.labels["channel"] == "(null)"
    values = set(history.frames["channel"]["channel"])
    assert {"null", "(null)"} <= values
