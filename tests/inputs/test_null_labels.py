"""A NULL dimension value and a real value spelled like one are two segments, everywhere."""

from __future__ import annotations

from datetime import date

import pandas as pd

from investigator.analysis.quality import quality_checks
from investigator.analysis.queries import daily_by_dimension, open_table, period_cube
from investigator.analysis.spec import AnalysisSpec, Window

SPEC = AnalysisSpec(
    metric="v", numerator="v", dimensions=["c"],
    current=Window(start=date(2026, 3, 22), end=date(2026, 3, 28)),
    baseline=Window(start=date(2026, 3, 15), end=date(2026, 3, 21)),
)  # fmt: skip


def frame(values: dict[str | None, float], days: int = 70) -> pd.DataFrame:
    dates = pd.date_range(end="2026-03-28", periods=days).date
    return pd.DataFrame([{"date": d, "c": c, "v": v} for d in dates for c, v in values.items()])


def test_null_and_the_text_null_stay_apart_in_the_cube_and_per_dimension() -> None:
    table = open_table(frame({None: 10.0, "(null)": 20.0, "null": 5.0, "US": 1.0}), "date")
    cube = period_cube(table, SPEC).set_index("c")["cur_v"].to_dict()
    assert cube == {"<null>": 70.0, "(null)": 140.0, "null": 35.0, "US": 7.0}
    per = daily_by_dimension(table, SPEC, "c").groupby("c")["value"].sum()
    assert per["<null>"] == 700.0 and per["(null)"] == 1400.0


def test_quality_labels_nulls_as_the_cube_does_when_the_look_alike_is_only_in_old_history() -> None:
    old = frame({"null": 5.0}, days=70).iloc[:10]  # a real "null" value, long before the lookback
    recent = frame({None: 10.0, "US": 1.0})
    recent.loc[(pd.to_datetime(recent["date"]) >= "2026-03-22") & recent["c"].isna(), "v"] = None
    table = open_table(pd.concat([old, recent], ignore_index=True), "date")
    label = period_cube(table, SPEC)["c"].tolist()
    issues = [i for i in quality_checks(table, SPEC).issues if i.segment]
    assert all(v in label for i in issues for v in i.segment.values())
