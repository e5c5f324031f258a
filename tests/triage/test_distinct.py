"""The scan counts a distinct count over each whole window, in the engine, as an investigation
does: users seen in the week, not user-days; a user in two stations counts once in the total and
once in each. Compared with pandas by hand, on DuckDB and SQLite."""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.sources import open_data
from investigator.triage.config import Target
from investigator.triage.scan import ScanItem, plan_source, scan_target

START = date(2026, 1, 5)
DAYS = 84


def visits(seed: int = 3) -> pd.DataFrame:
    """300 users, each active on a day with chance 0.15, at one of three stations that day (so
    most users are seen at several stations over a week)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(DAYS):
        d = START + timedelta(days=i)
        for u in np.flatnonzero(rng.random(300) < 0.15):
            rows.append({"date": d, "station": "abc"[int(rng.integers(0, 3))], "user_id": int(u)})
    return pd.DataFrame(rows)


def by_hand(frame: pd.DataFrame, end: date, station: str | None) -> tuple[float, float]:
    """The users seen in the 7 days ending `end`, and the median of the same count over the five
    weeks before (the scan's baseline)."""
    rows = frame if station is None else frame[frame["station"] == station]

    def users(last: date) -> int:
        return int(
            rows[(rows["date"] > last - timedelta(days=7)) & (rows["date"] <= last)]["user_id"].nunique()
        )

    return float(users(end)), float(np.median([users(end - timedelta(days=7 * k)) for k in range(1, 6)]))


def scanned(data: str, end: date, table: str | None = None) -> dict[str, ScanItem]:
    source = open_data(data, "date", table=table)
    windows = plan_source(source, "date", "7d", "previous", end)
    target = Target(metric="count_distinct(user_id)", data=data, table=table, time_column="date",
                    dimensions=None, scan_segments=["station"], direction="both")  # fmt: skip
    return {next(iter(i.segment.values()), "total"): i for i in scan_target(source, target, windows, 3.0, 50)}


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_a_weekly_distinct_count_is_the_users_of_the_week_in_the_total_and_each_station(
    tmp_path: Path, engine: str
) -> None:
    frame = visits()
    if engine == "duckdb":
        data, table = str(tmp_path / "v.parquet"), None
        frame.to_parquet(data, index=False)
    else:
        db = tmp_path / "v.sqlite"
        with sqlite3.connect(db) as con:
            frame.assign(date=frame["date"].astype(str)).to_sql("visits", con, index=False)
        data, table = f"sqlite:///{db}", "visits"
    end = START + timedelta(days=DAYS - 1)
    items = scanned(data, end, table)
    for station in ["total", "a", "b", "c"]:
        current, baseline = by_hand(frame, end, None if station == "total" else station)
        assert items[station].current == pytest.approx(current), station
        assert items[station].baseline == pytest.approx(baseline), station
    # a week holds about 0.15 x 7 visits per user: user-days would be about 1.7 times the users
    assert (items["total"].current or 0) < 300
    parts = sum(items[s].current or 0 for s in "abc")
    assert parts > (items["total"].current or 0)  # a user in two stations is in both


@pytest.mark.parametrize("engine", ["duckdb", "sqlite"])
def test_a_monthly_distinct_count_is_the_users_of_each_calendar_month(tmp_path: Path, engine: str) -> None:
    """A window of a whole month is scored as an investigation scores it: the users seen in the
    month and in the month before, in the total and in each station, never the days added up."""
    rng = np.random.default_rng(5)
    first, last = date(2025, 7, 1), date(2026, 2, 28)
    rows = []
    for i in range((last - first).days + 1):
        d = first + timedelta(days=i)
        for u in np.flatnonzero(rng.random(300) < 0.05):
            rows.append({"date": d, "station": "abc"[int(rng.integers(0, 3))], "user_id": int(u)})
    frame = pd.DataFrame(rows)
    if engine == "duckdb":
        data, table = str(tmp_path / "v.parquet"), None
        frame.to_parquet(data, index=False)
    else:
        with sqlite3.connect(tmp_path / "v.sqlite") as con:
            frame.assign(date=frame["date"].astype(str)).to_sql("visits", con, index=False)
        data, table = f"sqlite:///{tmp_path / 'v.sqlite'}", "visits"
    source = open_data(data, "date", table=table)
    windows = plan_source(source, "date", "1mo", "previous", last)
    target = Target(metric="count_distinct(user_id)", data=data, table=table, time_column="date",
                    dimensions=None, scan_segments=["station"], direction="both")  # fmt: skip
    scanned = scan_target(source, target, windows, 3.0, 50)
    items = {next(iter(i.segment.values()), "total"): i for i in scanned}
    month = frame["date"].map(lambda d: (d.year, d.month))
    for station in ["total", "a", "b", "c"]:
        rows_of = frame if station == "total" else frame[frame["station"] == station]
        users = rows_of.groupby(month[rows_of.index])["user_id"].nunique()
        assert items[station].current == pytest.approx(users[(2026, 2)]), station
        assert items[station].baseline == pytest.approx(users[(2026, 1)]), station
        days = rows_of[month[rows_of.index] == (2026, 2)].groupby("date")["user_id"].nunique().sum()
        assert days > 1.2 * users[(2026, 2)]  # user-days, what adding the days would have given
