"""The data's grain, windows in the units people use, and baselines aligned to the calendar."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pandas as pd
import pytest

from investigator.analysis.grain import Grain, WindowError, detect_grain, parse_window
from investigator.analysis.queries import daily_totals, open_table
from investigator.config import MetricDefinition
from investigator.errors import DataError, UserError
from investigator.request import Request, parse_end
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate_shaped
from investigator.sources.windows import plan_windows


def dates_of(frame: pd.DataFrame, column: str = "date") -> list[date]:
    return sorted({pd.Timestamp(d).date() for d in frame[column]})


def resolved(tmp_path: Path, frame: pd.DataFrame, window: str, **kw: object):  # type: ignore[no-untyped-def]
    path = tmp_path / "data.parquet"
    frame.to_parquet(path, index=False)
    request = Request(metric="value", window=window, **kw)
    return resolve(request, path, MetricDefinition(expression="value"))


# detection ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("shape", "unit", "step"),
    [
        ("events", "day", 1),
        ("daily", "day", 1),
        ("irregular", "day", 1),
        ("weekly", "week", 1),
        ("monthly", "month", 1),
        ("quarterly", "quarter", 1),
    ],
)
def test_grain_of_each_shape(shape: str, unit: str, step: int) -> None:
    frame, _ = generate_shaped(shape, seed=2)
    days = [pd.Timestamp(d).date() for d in frame["date"].drop_duplicates()]
    g = detect_grain(days)
    assert (g.unit, g.step) == (unit, step)


def test_weekly_on_mondays_is_anchored_on_monday() -> None:
    frame, _ = generate_shaped("weekly", seed=2)
    g = detect_grain(dates_of(frame))
    assert g.anchor.weekday() == 0
    assert g.start(date(2024, 3, 27)) == date(2024, 3, 25)  # a Wednesday is in Monday's week


def test_monthly_month_end_dates_across_leap_years() -> None:
    ends = [d.date() for d in pd.date_range("2015-01-31", "2024-12-31", freq="ME")]
    assert date(2016, 2, 29) in ends and date(2024, 2, 29) in ends
    g = detect_grain(ends)
    assert (g.unit, g.step) == ("month", 1)
    assert g.start(date(2024, 2, 29)) == date(2024, 2, 1) and g.end(date(2024, 2, 1)) == date(2024, 2, 29)


def test_yearly_and_five_yearly_integer_years_are_years() -> None:
    yearly, _ = generate_shaped("yearly", seed=0)
    five, _ = generate_shaped("5-yearly", seed=0)
    assert yearly["year"].dtype == "int64" and yearly["year"].min() == 1931
    for frame, step in ((yearly, 1), (five, 5)):
        t = open_table(frame, "year")
        assert t["year"].type().is_date()
        days = dates_of(t.select("year").distinct().to_pandas(), "year")
        assert days[0] == date(int(frame["year"].min()), 1, 1) and days[-1].year == int(frame["year"].max())
        g = detect_grain(days)
        assert (g.unit, g.step) == ("year", step)


def test_five_yearly_with_a_skipped_census_keeps_its_step() -> None:
    years = [date(y, 1, 1) for y in (1950, 1955, 1960, 1970, 1975, 1980)]  # 1965 is absent
    g = detect_grain(years)
    assert (g.unit, g.step) == ("year", 5) and g.label(date(1966, 6, 1)) == "1965-1969"


def test_yyyymm_integers_and_month_text_are_months() -> None:
    frame = pd.DataFrame(
        {"ym": [202311, 202312, 202401, 202402], "txt": ["2023-11", "2023-12", "2024-1", "2024-02"]}
    )
    frame["value"] = 1.0
    got = open_table(frame, "ym").to_pandas()
    assert [pd.Timestamp(d).date() for d in got["ym"]] == [
        date(2023, 11, 1), date(2023, 12, 1), date(2024, 1, 1), date(2024, 2, 1)
    ]  # fmt: skip
    text = open_table(frame, "txt").to_pandas()
    assert pd.Timestamp(text["txt"].iloc[2]).date() == date(2024, 1, 1)


def test_epoch_like_integers_are_not_read_as_years() -> None:
    frame = pd.DataFrame({"ts": [1_700_000_000, 1_700_086_400], "value": [1.0, 2.0]})
    got = open_table(frame, "ts").to_pandas()
    assert pd.Timestamp(got["ts"].iloc[0]).year == 2023  # seconds since 1970, not year 1700000000


# windows and baselines ----------------------------------------------------------------------------
MONTHLY = Grain("month", 1, date(2015, 1, 1))


def test_window_units() -> None:
    assert parse_window("3mo") == (3, "month") and parse_window("3m") == (3, "month")
    assert parse_window("2w") == (2, "week") and parse_window("1q") == (1, "quarter")
    assert parse_window("5y") == (5, "year") and parse_window("7d") == (7, "day")
    with pytest.raises(WindowError, match="not understood"):
        parse_window("3 fortnights")


def test_yoy_of_a_january_is_the_previous_january() -> None:
    cur, base = plan_windows("1mo", "yoy", MONTHLY, date(2024, 1, 31))
    assert (cur.start, cur.end) == (date(2024, 1, 1), date(2024, 1, 31))
    assert (base.start, base.end) == (date(2023, 1, 1), date(2023, 1, 31))


def test_end_inside_the_period_covers_the_whole_month() -> None:
    cur, base = plan_windows("1mo", "previous", MONTHLY, date(2024, 3, 15))
    assert (cur.start, cur.end) == (date(2024, 3, 1), date(2024, 3, 31))
    assert (base.start, base.end) == (date(2024, 2, 1), date(2024, 2, 29))  # leap February
    cur, base = plan_windows("1q", "yoy", MONTHLY, date(2024, 5, 2))
    assert (cur.start, cur.end) == (date(2024, 3, 1), date(2024, 5, 31))  # 3 months ending in May
    assert (base.start, base.end) == (date(2023, 3, 1), date(2023, 5, 31))


def test_quarterly_and_weekly_windows_are_whole_periods() -> None:
    quarterly = Grain("quarter", 1, date(2015, 1, 1))
    cur, base = plan_windows("1y", "previous", quarterly, date(2024, 5, 15))
    assert (cur.start, cur.end) == (date(2023, 7, 1), date(2024, 6, 30))
    assert (base.start, base.end) == (date(2022, 7, 1), date(2023, 6, 30))
    weekly = Grain("week", 1, date(2024, 1, 1))  # Mondays
    cur, base = plan_windows("7d", "yoy", weekly, date(2024, 3, 27))
    assert (cur.start, cur.end) == (date(2024, 3, 25), date(2024, 3, 31))
    assert base.start == date(2024, 3, 25) - timedelta(weeks=52) and base.start.weekday() == 0


def test_daily_keeps_its_behaviour_and_gets_calendar_months() -> None:
    daily = Grain("day", 1, date(2025, 1, 1))
    cur, base = plan_windows("7d", "yoy", daily, date(2026, 3, 29))
    assert cur.start == date(2026, 3, 23) and cur.start - base.start == timedelta(days=364)
    cur, base = plan_windows("2w", "wow", daily, date(2026, 3, 29))
    assert (cur.start, base.end) == (date(2026, 3, 16), date(2026, 3, 22))
    cur, base = plan_windows("1mo", "yoy", daily, date(2024, 2, 29))
    assert (cur.start, cur.end, base.start, base.end) == (
        date(2024, 2, 1), date(2024, 2, 29), date(2023, 2, 1), date(2023, 2, 28)
    )  # fmt: skip


def test_five_yearly_windows_and_baselines() -> None:
    five = Grain("year", 5, date(1950, 1, 1))
    cur, base = plan_windows("5y", "previous", five, date(2020, 1, 1))
    assert (cur.start, cur.end, base.start) == (date(2020, 1, 1), date(2024, 12, 31), date(2015, 1, 1))
    with pytest.raises(DataError, match=r"the data is every 5 years: try --window 5y"):
        plan_windows("1y", "previous", five, date(2020, 1, 1))
    with pytest.raises(DataError, match=r"--baseline yoy .* try --baseline previous$"):
        plan_windows("5y", "yoy", five, date(2020, 1, 1))


def test_a_window_finer_than_the_data_names_the_grain_and_the_window() -> None:
    with pytest.raises(DataError) as e:
        plan_windows("7d", "previous", MONTHLY, date(2024, 3, 31))
    assert str(e.value).endswith("the data is monthly: try --window 1mo")
    assert "--end" not in str(e.value)
    with pytest.raises(DataError, match="the data is weekly: try --window 4w"):
        plan_windows("1mo", "previous", Grain("week", 1, date(2024, 1, 1)), date(2024, 3, 31))
    with pytest.raises(DataError, match="the data is quarterly: try --window 1q"):
        plan_windows("2mo", "previous", Grain("quarter", 1, date(2015, 1, 1)), date(2024, 3, 31))
    with pytest.raises(
        DataError, match=r"--baseline wow .*the data is monthly: try --baseline previous or mom"
    ):
        plan_windows("1mo", "wow", MONTHLY, date(2024, 3, 31))
    with pytest.raises(UserError, match="not understood"):
        plan_windows("seven", "previous", MONTHLY, date(2024, 3, 31))


def test_end_as_a_month_quarter_or_year() -> None:
    assert parse_end("2024-03") == date(2024, 3, 31)
    assert parse_end("2024-Q1") == date(2024, 3, 31) and parse_end("2023") == date(2023, 12, 31)
    assert parse_end("2024-03-15") == date(2024, 3, 15)
    with pytest.raises(UserError, match="is not a date"):
        parse_end("2024-13")


# resolving against real-shaped files --------------------------------------------------------------
def test_resolve_records_the_grain_and_month_end_rows_fall_inside(tmp_path: Path) -> None:
    frame, _ = generate_shaped("monthly", seed=3)
    spec, table = resolved(tmp_path, frame, "1mo", end=date(2024, 3, 15))
    assert (spec.grain, spec.grain_step) == ("month", 1)
    assert (spec.current.start, spec.current.end) == (date(2024, 3, 1), date(2024, 3, 31))
    daily = daily_totals(table, spec)
    assert daily["date"].iloc[-1] == date(2024, 3, 1) and len(daily) == 96
    march = frame[pd.to_datetime(frame["date"]) == "2024-03-31"]["value"].sum()
    assert daily["value"].iloc[-1] == pytest.approx(march)


def test_month_start_rows_fall_inside_too(tmp_path: Path) -> None:
    frame, _ = generate_shaped("monthly", seed=3)
    frame["date"] = [pd.Timestamp(d).replace(day=1).date() for d in frame["date"]]
    spec, table = resolved(tmp_path, frame, "1mo", end=date(2024, 3, 15))
    assert spec.grain == "month"
    assert (spec.current.start, spec.current.end) == (date(2024, 3, 1), date(2024, 3, 31))
    assert daily_totals(table, spec)["date"].iloc[-1] == date(2024, 3, 1)


def test_default_end_is_the_last_period_and_default_window_is_refused_on_months(tmp_path: Path) -> None:
    frame, _ = generate_shaped("quarterly", seed=3)
    spec, _ = resolved(tmp_path, frame, "1q")
    assert (spec.current.start, spec.current.end) == (date(2024, 1, 1), date(2024, 3, 31))
    monthly, _ = generate_shaped("monthly", seed=3)
    with pytest.raises(DataError, match="the data is monthly: try --window 1mo"):
        resolved(tmp_path, monthly, "7d")


def test_window_after_the_data_is_refused_in_periods(tmp_path: Path) -> None:
    frame, _ = generate_shaped("monthly", seed=3)
    with pytest.raises(DataError) as e:
        resolved(tmp_path, frame, "1mo", end=date(2024, 4, 2))
    assert "after the data (its last month is 2024-03)" in str(e.value)  # the data's last, not the asked
    assert "the data covers 2016-04 to 2024-03 (96 months, monthly)" in str(e.value)


def test_integer_years_resolve_to_yearly_windows(tmp_path: Path) -> None:
    frame, _ = generate_shaped("yearly", seed=3)
    spec, _ = resolved(tmp_path, frame, "1y", time_column="year", end=date(2007, 6, 1))
    assert spec.grain == "year"
    assert (spec.current.start, spec.current.end) == (date(2007, 1, 1), date(2007, 12, 31))
    assert (spec.baseline.start, spec.baseline.end) == (date(2006, 1, 1), date(2006, 12, 31))
