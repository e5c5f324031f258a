"""The charts' numbers: the leading cause's segment over time, beside the total."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from investigator.analysis.causes import RootCause
from investigator.report.charts import chart_data, metric_chart
from investigator.request import Request, metric_definition
from investigator.run.evidence import Evidence
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate

DEFINITION = metric_definition("revenue")


def test_the_leading_segment_is_drawn_per_period_with_its_own_numbers(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=3, segment={"channel": "email"}, factor=0.4)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="revenue", data=str(path), end=date(2026, 3, 29)), path, DEFINITION)
    cause = RootCause(kind="segment_change", segment={"channel": "email"})
    data = chart_data(str(path), spec, [cause], Evidence())
    assert data.segment == "channel=email"
    expected = frame[frame["channel"] == "email"].groupby("date")["revenue"].sum()
    got = {p.day: p.value for p in data.segment_series}
    assert len(got) == len(data.series) > 50
    for day, value in list(got.items())[-10:]:
        assert value is not None and abs(value - expected[pd.Timestamp(day).date()]) < 0.01
    # the drop is visible where it happened: the window's days sit well below the weeks before
    values = {d: v for d, v in got.items() if v is not None}
    assert len(values) == len(got)
    window = [v for d, v in values.items() if d >= spec.current.start]
    before = [v for d, v in values.items() if d < spec.current.start][-28:]
    assert sum(window) / len(window) < 0.6 * sum(before) / len(before)
    tall = len(metric_chart(data))
    assert tall > len(metric_chart(data.model_copy(update={"segment_series": []})))  # a second panel


def test_no_segment_line_without_a_segment_cause(tmp_path: Path) -> None:
    frame, _ = generate("broad_based", seed=4)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="revenue", data=str(path), end=date(2026, 3, 29)), path, DEFINITION)
    cause = RootCause(kind="broad_based")
    data = chart_data(str(path), spec, [cause], Evidence())
    assert data.segment is None and data.segment_series == []


def test_charts_from_the_cause_checks_aggregates_are_the_charts_from_the_file(tmp_path: Path) -> None:
    """The report reuses what the run's cause check computed instead of querying the data again;
    the charts' numbers must be the same either way."""
    from investigator.run.checks import CauseChecker
    from investigator.sources.files import FileSource

    frame, _ = generate("segment_change", seed=5, segment={"channel": "email"}, factor=0.5)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="revenue", data=str(path), end=date(2026, 3, 29)), path, DEFINITION)
    cause = RootCause(kind="segment_change", segment={"channel": "email"})
    checker = CauseChecker(FileSource(path), spec, 0.25)
    assert checker.computed() is None  # nothing is computed before it is needed
    checker.check([cause])
    computed = checker.computed()
    assert computed is not None and computed.spec == spec
    reused = chart_data(str(path), spec, [cause], Evidence(), (computed.table, computed.daily, computed.cube))
    fresh = chart_data(str(path), spec, [cause], Evidence())
    assert reused == fresh
    assert reused.steps and reused.steps[0].label == "email" and reused.segment == "channel=email"


def test_a_century_of_years_gets_readable_round_year_ticks() -> None:
    """121 yearly points: at most 10 ticks, on round years (one tick a year drew 121 labels)."""
    import matplotlib

    matplotlib.use("Agg")
    from datetime import date

    import numpy as np
    from matplotlib.figure import Figure

    from investigator.analysis.grain import Grain
    from investigator.report.charts import _axis
    from investigator.report.mpldates import date_of

    ax = Figure().add_subplot()
    ax.plot(np.array([date(y, 1, 1) for y in range(1900, 2021)], dtype="datetime64[D]"), list(range(121)))
    _axis(ax, Grain("year", 1))
    lo, hi = ax.get_xlim()
    years = [date_of(t).year for t in ax.xaxis.get_major_locator()() if lo <= t <= hi]
    assert 5 <= len(years) <= 11 and all(y % 20 == 0 for y in years), years
