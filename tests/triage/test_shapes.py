"""The scan on generated series of the shapes that made the morning job cry wolf: a holiday and its
echo a week later, an outage in the baseline, a count going 1 -> 0 (and 0 -> 159), a ratio read in
the investigation's units, a move every earlier year made too, and one event in every segment."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pytest

from investigator.triage.alerts import group

from .shapes import START, daily, scan

HOLIDAY = date(2026, 4, 15)  # a Wednesday, 104 days in


def test_a_holiday_is_flagged_and_its_echo_a_week_later_is_not(tmp_path: Path) -> None:
    path = daily(tmp_path / "h.parquet", 130, lambda d, s: 0.4 if d == HOLIDAY else 1.0)
    day = scan(path, "riders", HOLIDAY)
    assert day["total"].flagged and day["total"].score is not None and day["total"].score < -3
    echo = scan(path, "riders", HOLIDAY + timedelta(days=7))
    # against the holiday alone the next Wednesday is +150%; against the median of the four
    # Wednesdays before, it is an ordinary day
    assert echo["total"].change_pct is not None and abs(echo["total"].change_pct) < 0.1
    assert echo["total"].score is not None and abs(echo["total"].score) < 3
    assert not any(i.flagged for i in echo.values())


def test_two_holidays_a_week_apart_leave_no_echo_in_the_weeks_after(tmp_path: Path) -> None:
    """Christmas and New Year fall on the same weekday a week apart: both sit in the baseline of
    the next few weeks' same weekday, and a median of four (the mean of its middle two) is dragged
    halfway down by them; none of those days may be flagged as a rise."""
    first = HOLIDAY
    second = HOLIDAY + timedelta(days=7)
    path = daily(tmp_path / "x.parquet", 140, lambda d, s: 0.4 if d in (first, second) else 1.0)
    for weeks in (1, 2, 3):
        items = scan(path, "riders", second + timedelta(days=7 * weeks))
        total = items["total"]
        assert total.change_pct is not None and abs(total.change_pct) < 0.1, weeks
        assert not any(i.flagged for i in items.values()), weeks


def test_the_day_a_five_week_fall_ends_is_no_rise_and_a_new_level_is_not_flagged_for_ever(
    tmp_path: Path,
) -> None:
    """Station a at 60% for five weeks after ten months, then back: the weeks of the fall fill the
    plain median of five, so its end read against them is a +60% "rise"; the windows that stood
    out are left out, so the end is an ordinary day. Station b moves to 70% for good: flagged while
    new, the usual level again after about six weeks (a baseline that left out every flagged
    window would flag it for ever)."""
    down = START + timedelta(days=300)
    back = down + timedelta(days=35)

    def factor(d: date, s: str) -> float:
        if s == "a":
            return 0.6 if down <= d < back else 1.0
        if s == "b":
            return 0.7 if d >= down else 1.0
        return 1.0

    path = daily(tmp_path / "f.parquet", 400, factor, seed=3)
    held = scan(path, "riders", back - timedelta(days=1))["a"]
    assert held.flagged and held.score is not None and held.score < -3  # still down against usual days
    for k in range(3):
        a = scan(path, "riders", back + timedelta(days=k))["a"]
        assert a.change_pct is not None and abs(a.change_pct) < 0.1 and not a.flagged, (k, a)
    b = scan(path, "riders", down + timedelta(days=7 * 8))["b"]
    assert not b.flagged and b.change_pct is not None and abs(b.change_pct) < 0.1


def test_an_outage_in_the_baseline_is_never_read_as_zeros(tmp_path: Path) -> None:
    """A 7-day window whose previous week holds a day with no rows at all: not a rise."""
    gone = date(2026, 4, 8)
    path = daily(tmp_path / "o.parquet", 110, skip={gone})
    end = gone + timedelta(days=7)  # the window ends a week after the outage: it is in the baseline
    items = scan(path, "riders", end, window="7d", baseline="previous")
    total = items["total"]
    assert total.change_pct is not None and abs(total.change_pct) < 0.05  # against four whole weeks
    assert not any(i.flagged for i in items.values())


def test_a_window_that_ends_on_an_outage_says_so_and_is_not_flagged(tmp_path: Path) -> None:
    """A 7-day window whose last day has no rows: a 14% fall read as zeros, said as an outage."""
    gone = date(2026, 4, 8)
    path = daily(tmp_path / "o.parquet", 110, skip={gone})
    items = scan(path, "riders", gone, window="7d", baseline="previous")
    assert items["total"].note is not None and "outage" in items["total"].note
    assert not items["total"].flagged


def test_a_count_of_one_going_to_zero_is_not_news_and_zero_to_159_is(tmp_path: Path) -> None:
    """Five weeks of a new table (too few Wednesdays to score a percent change): station a's
    riders are about 1 a day and fall to 0, station b's are 0 and jump to 159."""
    end = START + timedelta(days=34)

    def factor(d: date, s: str) -> float:
        if s == "a":
            return 0.0 if d == end else 0.001
        if s == "b":
            return 0.159 if d == end else 0.0
        return 1.0

    path = daily(tmp_path / "c.parquet", 35, factor, seed=4)
    items = scan(path, "riders", end)
    a, b = items["a"], items["b"]
    assert a.scale == "count" and not a.flagged
    assert a.note is not None and "min_volume" in a.note
    assert b.scale == "count" and b.flagged and b.score is not None and b.score > 10
    assert b.current is not None and b.current > 100


def test_a_ratio_is_scored_in_points_as_the_investigation_reads_it(tmp_path: Path) -> None:
    """late/trips: the scan's z is the change in points against history in points (what
    `analysis.movement` gives a ratio), not a percent of a tiny share."""
    path = daily(tmp_path / "r.parquet", 120, seed=2)
    items = scan(path, "late/trips", None)
    total = items["total"]
    assert total.scale == "points"
    assert total.current is not None and total.baseline is not None
    assert total.change == pytest.approx(total.current - total.baseline, abs=1e-6)
    assert total.change_pct == pytest.approx((total.current - total.baseline) / total.baseline, abs=1e-5)
    assert not total.flagged


def test_a_move_every_earlier_year_made_is_labelled_expected(tmp_path: Path) -> None:
    """Three years with a holiday on the same date each year: the third is flagged and expected."""
    start = date(2023, 1, 1)
    days = {date(y, 7, 4) for y in (2023, 2024, 2025)}
    path = daily(tmp_path / "y.parquet", 1000, lambda d, s: 0.4 if d in days else 1.0, start=start)
    items = scan(path, "riders", date(2025, 7, 4))
    assert items["total"].flagged and items["total"].expected == "2/2"
    plain = scan(path, "riders", date(2025, 7, 4) - timedelta(days=21))
    assert plain["total"].expected is None


def thanksgiving(year: int) -> date:
    nov1 = date(year, 11, 1)
    return nov1 + timedelta(days=(3 - nov1.weekday()) % 7 + 21)


def test_a_holiday_that_moves_with_the_weekday_is_expected_every_year(tmp_path: Path) -> None:
    """The fourth Thursday of November: 2025-11-27, 2024-11-28 (364 days back), 2023-11-23 (735
    days back, 105 weeks: neither 104 weeks nor the same date)."""
    start = date(2023, 1, 1)
    days = {thanksgiving(y) for y in (2023, 2024, 2025)}
    path = daily(tmp_path / "t.parquet", 1062, lambda d, s: 0.45 if d in days else 1.0, start=start)
    items = scan(path, "riders", thanksgiving(2025))
    assert items["total"].flagged and items["total"].expected == "2/2"


def test_a_drop_beside_a_small_move_a_year_back_is_not_expected(tmp_path: Path) -> None:
    """Station a loses 60% on one day; a year and two years back on the same weekday it was 10%
    down (a dip past half the threshold, not a move of the same size): the drop is news."""
    start = date(2023, 1, 1)
    drop = date(2025, 6, 11)
    small = {drop - timedelta(days=364), drop - timedelta(days=728)}

    def factor(d: date, s: str) -> float:
        if s != "a":
            return 1.0
        return 0.4 if d == drop else (0.9 if d in small else 1.0)

    path = daily(tmp_path / "d.parquet", 900, factor, start=start, seed=5)
    a = scan(path, "riders", drop)["a"]
    assert a.flagged and a.expected is None


STORM = START + timedelta(days=180)


def test_a_storm_in_every_segment_is_one_alert_headed_by_the_total(tmp_path: Path) -> None:
    storm = STORM
    path = daily(tmp_path / "s.parquet", 200, lambda d, s: 0.3 if d == storm else 1.0)
    items = scan(path, "riders", storm)
    assert sum(i.flagged for i in items.values()) == 5
    [alert] = group(list(items.values()))
    assert alert.head.segment == {} and sorted(m.segment["station"] for m in alert.members) == [
        "a",
        "b",
        "c",
        "d",
    ]


def test_a_segment_that_moved_against_its_total_is_its_own_alert(tmp_path: Path) -> None:
    storm = STORM
    path = daily(tmp_path / "s.parquet", 200, lambda d, s: (1.6 if s == "d" else 0.2) if d == storm else 1.0)
    alerts = {json.dumps(a.head.segment): a for a in group(list(scan(path, "riders", storm).values()))}
    assert set(alerts) == {"{}", json.dumps({"station": "d"})}
    assert len(alerts["{}"].members) == 3 and np.sign(alerts["{}"].head.score or 0) == -1
    rise = alerts[json.dumps({"station": "d"})]
    assert rise.members == [] and np.sign(rise.head.score or 0) == 1
