"""Missing and non-finite metric values are a data problem, never a number and never a crash."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from investigator.analysis.movement import movement
from investigator.analysis.queries import daily_totals, open_table, period_cube
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.fmt import num
from investigator.sources.synth import generate

from .helpers import notes, run

END = pd.Timestamp("2026-03-29")


def keep_nan(frame: pd.DataFrame, path: Path) -> Path:
    """Parquet that holds NaN as NaN (not as null), as Arrow writers other than pandas do."""
    columns = {c: pa.array(frame[c].tolist(), from_pandas=False) for c in frame.columns}
    pq.write_table(pa.table(columns), path)
    return path


def test_an_infinite_value_is_left_out_counted_and_never_crashes(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=3, segment={"country": "US"}, factor=0.5)
    frame.loc[frame.index[-5], "revenue"] = np.inf
    frame.loc[frame.index[-9], "revenue"] = -np.inf
    path = tmp_path / "inf.csv"
    frame.to_csv(path, index=False)
    report, state = run(path, tmp_path, metric="sum(revenue)")
    current, baseline = report.movement.current, report.movement.baseline
    assert current is not None and baseline is not None
    assert np.isfinite(current) and np.isfinite(baseline)
    assert [c.segment for c in report.root_causes][:1] == [{"country": "US"}]
    assert any("2 NaN or infinite values" in n for n in notes(state))


def test_a_day_of_nan_values_is_a_data_problem_not_a_segment(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=3, segment={"country": "US"}, factor=0.85)
    frame.loc[pd.to_datetime(frame["date"]) == END - pd.Timedelta(days=3), "revenue"] = np.nan
    path = keep_nan(frame, tmp_path / "nan.parquet")
    report, state = run(path, tmp_path, metric="sum(revenue)")
    top = report.root_causes[0]
    assert (top.kind, top.detail) == ("data_quality", "null_values")
    assert top.contribution is not None and top.contribution > 0.5
    assert not any(c.kind == "segment_change" for c in report.root_causes)
    assert any("NaN or infinite values" in n for n in notes(state))


def test_nan_sums_are_never_silently_zero(tmp_path: Path) -> None:
    frame = pd.DataFrame(
        {"date": pd.date_range("2026-03-01", periods=14).date, "c": "US", "v": [1.0] * 7 + [np.nan] * 7}
    )
    spec = AnalysisSpec(
        metric="v", numerator="v", dimensions=["c"],
        current=Window(start=date(2026, 3, 8), end=date(2026, 3, 14)),
        baseline=Window(start=date(2026, 3, 1), end=date(2026, 3, 7)),
    )  # fmt: skip
    table = open_table(keep_nan(frame, tmp_path / "v.parquet"), "date")
    daily = daily_totals(table, spec)
    assert daily["v"].iloc[-1] != daily["v"].iloc[-1]  # NaN: no value, not 0
    assert np.isnan(movement(daily, spec).current)
    assert period_cube(table, spec)["base_v"].tolist() == [7.0]


def test_a_metric_that_stays_at_zero_did_not_move() -> None:
    days = pd.date_range("2026-01-01", periods=90).date
    daily = pd.DataFrame({"date": days, "v": 0.0, "rows": 1})
    spec = AnalysisSpec(
        metric="v", numerator="v",
        current=Window(start=days[-7], end=days[-1]), baseline=Window(start=days[-14], end=days[-8]),
    )  # fmt: skip
    m = movement(daily, spec)
    assert m.change == 0 and not m.significant
    assert not movement(daily.iloc[-14:], spec).significant  # no history either


def test_the_number_formatter_takes_any_value() -> None:
    assert [num(float("inf")), num(float("-inf")), num(float("nan")), num("inf"), num("x")] == [  # type: ignore[arg-type]
        "+inf", "-inf", "n/a", "+inf", "n/a",
    ]  # fmt: skip


def test_the_quality_finding_always_counts_bad_values() -> None:
    from investigator.analysis.quality import QualityIssue, QualityReport
    from investigator.run.compress import summarise

    big = QualityIssue(detail="missing_data", effect=-50, share=-0.5, evidence="no rows on 03-26")
    bad = QualityIssue(detail="null_values", evidence="3 NaN or infinite values", non_finite=3)
    read = summarise(QualityReport(metric="v", numerator_change=-100, issues=[big, bad]))
    assert read is not None
    text = read[0]
    assert "3 NaN or infinite values were left out of the sums" in text
