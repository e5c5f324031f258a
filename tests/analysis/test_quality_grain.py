"""Every check at the data's grain: missing months not days, relabelling, attributes, nulls."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.movement import historical_changes, movement, window_value
from investigator.analysis.quality import quality_checks
from investigator.analysis.queries import daily_totals, period_cube
from investigator.analysis.seasonality import seasonality
from investigator.analysis.spec import AnalysisSpec
from investigator.config import MetricDefinition
from investigator.request import Request
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate_shaped

DAILY_WINDOW = {"events": "7d", "daily": "7d", "irregular": "7d"}


def resolved(
    tmp_path: Path, frame: pd.DataFrame, truth: dict[str, Any], **kw: Any
) -> tuple[AnalysisSpec, Any]:
    path = tmp_path / f"{truth['scenario']}.parquet"
    frame.to_parquet(path, index=False)
    fields = {"window": truth["window"], "time_column": truth["time_column"], **kw}
    return resolve(Request(metric="value", **fields), path, MetricDefinition(expression="value"))


@pytest.mark.parametrize(
    "shape", ["events", "daily", "irregular", "weekly", "monthly", "quarterly", "yearly", "5-yearly"]
)
def test_nothing_wrong_means_no_missing_data(shape: str, tmp_path: Path) -> None:
    frame, truth = generate_shaped(shape, seed=4, null_share=0.05)
    spec, table = resolved(tmp_path, frame, truth)
    q = quality_checks(table, spec)
    assert [i for i in q.issues if i.detail == "missing_data"] == []
    assert q.material == []
    assert all(abs(i.share) <= 1 for i in q.issues)


@pytest.mark.parametrize(("shape", "window"), [("monthly", 3), ("weekly", 3), ("yearly", 3), ("5-yearly", 3)])
def test_a_missing_period_is_found_with_its_expected_value(shape: str, window: int, tmp_path: Path) -> None:
    full, _ = generate_shaped(shape, seed=5, window=window)
    frame, truth = generate_shaped(shape, seed=5, window=window, plant="missing_period")
    spec, table = resolved(tmp_path, frame, truth)
    q = quality_checks(table, spec)
    whole = [i for i in q.issues if i.detail == "missing_data" and not i.segment]
    assert len(whole) == 1
    issue = whole[0]
    time = truth["time_column"]
    lost = sorted(set(full[time]) - set(frame[time]))
    assert len(lost) == 1 and len(issue.days) == 1
    assert spec.periods.start(issue.days[0]) == issue.days[0]
    assert issue.days[0].year == (lost[0] if time == "year" else pd.Timestamp(lost[0]).year)
    lost_value = full.loc[full[time] == lost[0], "value"].sum()
    assert issue.effect == pytest.approx(-lost_value, rel=0.15)
    assert issue.share == pytest.approx(1.0, abs=0.2) and abs(issue.share) <= 1.0
    assert f"1 {spec.periods.name} of the current window" in issue.evidence


def test_share_is_capped_when_the_change_is_small(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=5, window=3, plant="missing_period")
    # the other two months of the window make up most of the lost one: a tiny net change
    months = sorted(frame["date"].unique())
    now, before = frame["date"].isin(months[-2:]), frame["date"].isin(months[-5:-2])
    frame.loc[now, "value"] *= 1.002 * frame.loc[before, "value"].sum() / frame.loc[now, "value"].sum()
    spec, table = resolved(tmp_path, frame, truth)
    q = quality_checks(table, spec)
    issue = next(i for i in q.issues if i.detail == "missing_data")
    assert abs(q.numerator_change) < 0.1 * abs(issue.effect)
    assert abs(issue.share) == 1.0


def test_relabelling_is_found_with_both_names(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=6, plant="relabel")
    spec, table = resolved(tmp_path, frame, truth)
    q = quality_checks(table, spec)
    found = [i for i in q.issues if i.detail == "relabelled"]
    assert len(found) == 1
    assert found[0].segment == {"industry": "retail"} and found[0].renamed_to == {"industry": "retail trade"}
    assert "industry=retail stops after 2024-02" in found[0].evidence
    assert "industry=retail trade starts in 2024-03" in found[0].evidence
    assert found[0].effect == 0.0  # a new name moves value between labels, not the total
    assert not any(i.detail == "missing_data" for i in q.issues)  # not also reported as missing


def test_a_new_value_alone_is_not_a_relabelling(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=6)
    last = frame["date"] == frame["date"].max()
    extra = frame[last & (frame["industry"] == "retail")].assign(industry="retail trade")
    spec, table = resolved(tmp_path, pd.concat([frame, extra]), truth)
    assert not any(i.detail == "relabelled" for i in quality_checks(table, spec).issues)


def test_attribute_absent_on_some_days_is_not_missing_data(tmp_path: Path) -> None:
    frame, truth = generate_shaped("daily", seed=7, attribute=True)
    day = pd.to_datetime(frame["date"])
    # sunny on every day of the baseline, on some days before it, and not on two current days
    frame["weather"] = np.where(day.dt.day % 3 == 0, "rain", "sunny")
    frame.loc[day.between("2024-03-18", "2024-03-24"), "weather"] = "sunny"
    frame.loc[day.isin(pd.to_datetime(["2024-03-27", "2024-03-29"])), "weather"] = "rain"
    spec, table = resolved(tmp_path, frame, truth)
    assert "weather" in spec.dimensions
    q = quality_checks(table, spec)
    assert not any("weather" in i.segment for i in q.issues)
    # a real partition that is present every day is still found
    lost = day.isin(pd.to_datetime(["2024-03-27", "2024-03-29"])) & (frame["region"] == "east")
    spec, table = resolved(tmp_path, frame[~lost], truth)
    issue = next(i for i in quality_checks(table, spec).issues if i.segment)
    assert issue.segment == {"region": "east"} and issue.days == [date(2024, 3, 27), date(2024, 3, 29)]


def test_null_dimension_values_are_their_own_segment(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=8)
    frame["region"] = frame["region"].astype(object)
    frame.loc[frame.index % 7 == 0, "region"] = None
    frame.loc[frame.index % 7 == 1, "region"] = "(null)"  # a real value spelled like a null
    spec, table = resolved(tmp_path, frame, truth)
    cube = period_cube(table, spec)
    labels = set(cube["region"])
    assert {"null", "(null)"} <= labels and not labels & {"None", "nan", "<NA>"}
    now = pd.to_datetime(frame["date"]) == "2024-03-31"
    expected = frame.loc[now & frame["region"].isna(), "value"].sum()
    assert cube.loc[cube["region"] == "null", "cur_value"].sum() == pytest.approx(expected)


def test_null_label_steps_aside_for_a_real_value_spelled_null(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=8)
    frame["region"] = frame["region"].astype(object)
    frame.loc[frame.index % 7 == 0, "region"] = None
    frame.loc[frame.index % 7 == 1, "region"] = "null"
    spec, table = resolved(tmp_path, frame, truth)
    cube = period_cube(table, spec)
    now = pd.to_datetime(frame["date"]) == "2024-03-31"
    assert cube.loc[cube["region"] == "null", "cur_value"].sum() == pytest.approx(
        frame.loc[now & (frame["region"] == "null"), "value"].sum()
    )
    assert cube.loc[cube["region"] == "(null)", "cur_value"].sum() == pytest.approx(
        frame.loc[now & frame["region"].isna(), "value"].sum()
    )


def test_nulls_moving_in_a_dimension_are_a_finding(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=9, plant="null_shift", null_share=0.05)
    spec, table = resolved(tmp_path, frame, truth)
    issues = [i for i in quality_checks(table, spec).issues if i.detail == "null_values"]
    assert [i.segment for i in issues] == [{"region": "null"}]
    assert "region is null for" in issues[0].evidence and issues[0].share == 0.0
    clean, truth = generate_shaped("monthly", seed=9, null_share=0.05)
    spec, table = resolved(tmp_path, clean, truth)
    assert not any(i.detail == "null_values" for i in quality_checks(table, spec).issues)


def test_null_metric_values_carry_their_effect_and_never_become_zero(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=10)
    now = pd.to_datetime(frame["date"]) == "2024-03-31"
    hit = now & (frame.index % 3 == 0)
    lost = frame.loc[hit, "value"].sum()
    frame.loc[hit, "value"] = np.nan
    spec, table = resolved(tmp_path, frame, truth)
    q = quality_checks(table, spec)
    issue = next(i for i in q.issues if i.detail == "null_values" and not i.segment)
    assert issue.effect == pytest.approx(-lost, rel=0.2)
    assert abs(issue.share) >= 0.25  # material: the drop is the nulls
    frame.loc[now, "value"] = np.nan
    spec, table = resolved(tmp_path, frame, truth)
    daily = daily_totals(table, spec)
    assert np.isnan(daily["value"].iloc[-1]) and daily["rows"].iloc[-1] == now.sum()
    assert np.isnan(window_value(daily, spec, spec.current))


def test_movement_history_counts_periods(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=11)
    spec, table = resolved(tmp_path, frame, truth)
    daily = daily_totals(table, spec)
    assert movement(daily, spec).history_points == 94  # 96 months, each after a whole month
    spec, _ = resolved(tmp_path, frame, truth, baseline="yoy")
    assert movement(daily, spec).history_points == 83
    # a month missing in the history is missing, not a month of zeros
    holed = frame[pd.to_datetime(frame["date"]) != "2022-06-30"]
    spec, table = resolved(tmp_path, holed, truth)
    changes = historical_changes(daily_totals(table, spec), spec)
    assert len(changes) == 92 and changes.min() > -0.5


def test_seasonality_at_each_grain(tmp_path: Path) -> None:
    frame, truth = generate_shaped("monthly", seed=12)
    march = pd.to_datetime(frame["date"]).dt.month == 3
    frame.loc[march, "value"] *= 0.7  # every March dips
    spec, table = resolved(tmp_path, frame, truth)
    s = seasonality(daily_totals(table, spec), spec)
    assert s.available and s.seasonal and s.best_lag == "12 months"
    assert s.comparisons[0].lag_days == (date(2024, 3, 1) - date(2023, 3, 1)).days
    spec, table = resolved(tmp_path, frame, truth, baseline="yoy")
    s = seasonality(daily_totals(table, spec), spec)
    assert not s.available and s.reason is not None and "yoy" in s.reason
    weekly, wtruth = generate_shaped("weekly", seed=12)
    spec, table = resolved(tmp_path, weekly, wtruth)
    assert seasonality(daily_totals(table, spec), spec).best_lag == "52 weeks"
    for shape in ("yearly", "5-yearly"):
        f, t = generate_shaped(shape, seed=12)
        spec, table = resolved(tmp_path, f, t)
        s = seasonality(daily_totals(table, spec), spec)
        assert not s.available and s.reason is not None and "no season within a year" in s.reason
    short, struth = generate_shaped("monthly", seed=12, periods=10)
    spec, table = resolved(tmp_path, short, struth)
    s = seasonality(daily_totals(table, spec), spec)
    assert not s.available and s.reason is not None and "the history starts" in s.reason
