"""The window planner on explicit ranges and trailing averages, grain by grain."""

from __future__ import annotations

from datetime import date

import pytest

from investigator.analysis.grain import Grain
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.errors import DataError, UserError
from investigator.request import Request, Span, build_request
from investigator.sources.windows import plan_windows

DAILY = Grain("day", 1, date(2026, 1, 1))
WEEKLY = Grain("week", 1, date(2024, 1, 1))  # Mondays
MONTHLY = Grain("month", 1, date(2020, 1, 1))
END = date(2026, 3, 29)


def w(a: str, b: str) -> Window:
    return Window(start=date.fromisoformat(a), end=date.fromisoformat(b))


def test_a_range_is_the_window_its_length_names() -> None:
    for window, baseline in [("7d", "previous"), ("7d", "wow"), ("7d", "yoy"), ("2w", "avg3")]:
        plain = plan_windows(window, baseline, DAILY, END)
        ranged = plan_windows(f"{plain[0].start}..{plain[0].end}", baseline, DAILY, END)
        assert ranged == plain, (window, baseline)
    assert plan_windows("3mo", "avg2", MONTHLY, date(2024, 3, 31)) == plan_windows(
        "2024-01-01..2024-03-31", "avg2", MONTHLY, END
    )


def test_trailing_averages() -> None:
    cur, base = plan_windows("7d", "avg4", DAILY, END)
    assert (cur, base) == (w("2026-03-23", "2026-03-29"), w("2026-02-23", "2026-03-22"))
    cur, base = plan_windows("1q", "avg4", MONTHLY, date(2024, 3, 31))
    assert base == w("2023-01-01", "2023-12-31")
    cur, base = plan_windows("1mo", "avg3", DAILY, date(2026, 3, 31))  # whole months of daily data
    assert (cur, base) == (w("2026-03-01", "2026-03-31"), w("2025-12-01", "2026-02-28"))
    cur, base = plan_windows("2w", "avg2", WEEKLY, date(2024, 3, 31))
    assert (cur, base) == (w("2024-03-18", "2024-03-31"), w("2024-02-19", "2024-03-17"))


def test_the_scale_is_the_ratio_of_lengths() -> None:
    def spec(cur: Window, base: Window, grain: str = "day") -> AnalysisSpec:
        return AnalysisSpec(metric="m", numerator="m", current=cur, baseline=base, grain=grain)

    assert spec(*plan_windows("7d", "avg4", DAILY, END)).baseline_scale == 0.25
    assert spec(*plan_windows("1mo", "mom", DAILY, date(2026, 3, 31))).baseline_scale == 1.0  # 31 vs 28 days
    unequal = spec(w("2026-03-01", "2026-03-31"), w("2026-01-01", "2026-02-28"))
    assert unequal.baseline_scale == 0.5  # whole months: per month
    assert spec(w("2026-03-23", "2026-03-29"), w("2026-03-01", "2026-03-14")).baseline_scale == 0.5
    ratio = AnalysisSpec(metric="r", numerator="a", denominator="b", current=unequal.current,
                         baseline=unequal.baseline)  # fmt: skip
    assert ratio.scaled(3.0) == 3.0 and unequal.scaled(3.0) == 1.5


def test_refusals_name_what_to_write() -> None:
    with pytest.raises(DataError, match=r"try --window 2024-01-01\.\.2024-03-31$"):
        plan_windows("2024-01-15..2024-03-31", "previous", MONTHLY, END)
    with pytest.raises(DataError, match="is not whole weeks: the data is weekly: try --window 2024-03-18"):
        plan_windows("2024-03-19..2024-03-31", "previous", WEEKLY, END)
    with pytest.raises(DataError, match=r"overlaps the window .*try --baseline 2024-01-01\.\.2024-01-31$"):
        plan_windows("2024-02-01..2024-02-29", "2024-02-01..2024-02-29", MONTHLY, END)
    with pytest.raises(DataError, match=r"not whole months.*try --baseline 2023-01-01\.\.2023-01-31"):
        plan_windows("2024-02-01..2024-02-29", "2023-01-05..2023-01-31", MONTHLY, END)
    with pytest.raises(UserError, match=r"--end 2026-03-29 with --window 2026-03-23\.\.2026-03-29"):
        build_request(
            "revenue", None, "2026-03-23..2026-03-29", "2026-03-29", "previous", None, None, None, flag="--"
        )
    with pytest.raises(UserError, match=r"^baseline 'avg53' averages 53 windows"):
        build_request("revenue", None, "7d", None, "avg53", None, None, None)  # the notebook's words


def test_a_range_survives_a_checkpoint() -> None:
    ask = build_request("revenue", None, " 2026-03-23 .. 2026-03-29", None, "AVG4", None, None, None)
    assert ask.window == Span.of("2026-03-23..2026-03-29") and ask.baseline == "avg4"
    back = Request.model_validate_json(ask.model_dump_json())
    assert back == ask and back.window.is_range and back.window.end == date(2026, 3, 29)
    assert Request.model_validate({"metric": "m", "baseline": "yoy"}).window.short == "7d"


def test_the_history_compares_each_earlier_window_with_its_own_trailing_mean() -> None:
    import numpy as np
    import pandas as pd

    from investigator.analysis.movement import historical_changes, movement
    from investigator.sources.synth import generate

    frame, _ = generate("segment_change", seed=5, segment={"channel": "social"}, factor=0.5)
    frame["date"] = pd.to_datetime(frame["date"]).dt.date
    daily = frame.groupby("date", as_index=False)[["revenue", "orders"]].sum()
    cur, base = plan_windows("7d", "avg4", DAILY, END)
    total = AnalysisSpec(metric="revenue", numerator="revenue", current=cur, baseline=base)
    ratio = AnalysisSpec(metric="aov", numerator="revenue", denominator="orders", current=cur, baseline=base)

    def window(end: date, column: str, weeks: int = 1) -> float:
        days = daily["date"]
        return float(daily.loc[(days > end - pd.Timedelta(days=7 * weeks)) & (days <= end), column].sum())

    # the ratio over the four windows: their revenue over their orders, not a mean of four ratios
    prior_end = cur.start - pd.Timedelta(days=1)
    assert movement(daily, ratio).baseline == pytest.approx(
        window(prior_end, "revenue", 4) / window(prior_end, "orders", 4)
    )
    # the last earlier window (ending a week before the current one) against its own four before it
    hist = historical_changes(daily, total)
    last_end = END - pd.Timedelta(days=7)
    mean = window(last_end - pd.Timedelta(days=7), "revenue", 4) / 4
    assert hist[-1] == pytest.approx((window(last_end, "revenue") - mean) / mean)
    assert np.isfinite(hist).all() and len(hist) > 8
