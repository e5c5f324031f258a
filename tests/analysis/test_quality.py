from __future__ import annotations

from datetime import timedelta
from itertools import product

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.quality import quality_checks
from investigator.analysis.queries import open_table

from .helpers import END, spec

DIMS = {"country": ["US", "DE", "JP"], "platform": ["web", "app"]}


def table(days: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    leaves = list(product(*DIMS.values()))
    rows = [
        (END - timedelta(days=days - 1 - d), c, p, 100.0 * (1 + rng.normal(0, 0.01)))
        for d in range(days)
        for c, p in leaves
    ]
    return pd.DataFrame(rows, columns=["date", "country", "platform", "revenue"])


def check(frame: pd.DataFrame):  # type: ignore[no-untyped-def]
    return quality_checks(open_table(frame, "date"), spec())


def test_clean_data_has_no_issue() -> None:
    assert check(table()).issues == []


def test_duplicated_day_in_the_window() -> None:
    t = table()
    day = END - timedelta(days=2)
    q = check(pd.concat([t, t[t["date"] == day]]))
    assert [i.detail for i in q.issues] == ["duplicates"]
    issue = q.issues[0]
    assert issue.days == [day] and issue.segment == {}
    assert issue.effect == pytest.approx(t.loc[t["date"] == day, "revenue"].sum())
    assert issue.share == pytest.approx(1.0, abs=0.1)  # it explains the whole change


def test_duplicated_day_in_the_baseline_pushes_the_other_way() -> None:
    t = table()
    day = END - timedelta(days=9)
    q = check(pd.concat([t, t[t["date"] == day]]))
    assert q.issues[0].detail == "duplicates" and q.issues[0].effect < 0


def test_missing_partition_is_named_by_its_segment() -> None:
    t = table()
    lost = [END - timedelta(days=1), END - timedelta(days=3)]
    q = check(t[~((t["country"] == "JP") & t["date"].isin(lost))])
    assert q.issues[0].detail == "missing_data"
    assert q.issues[0].segment == {"country": "JP"}
    assert sorted(q.issues[0].days) == sorted(lost)
    assert q.issues[0].share == pytest.approx(1.0, abs=0.15)
    assert all(i.segment != {"platform": "web"} for i in q.issues)  # echoes in other dimensions dropped


def test_whole_day_missing() -> None:
    t = table()
    q = check(t[t["date"] != END - timedelta(days=4)])
    assert any(i.detail == "missing_data" and i.segment == {} for i in q.issues)


def test_incomplete_recent_days_alike_across_segments() -> None:
    t = table()
    t.loc[t["date"] == END, "revenue"] *= 0.4
    t.loc[t["date"] == END - timedelta(days=1), "revenue"] *= 0.7
    q = check(t)
    assert q.issues[0].detail == "incomplete_recent_data"
    assert q.issues[0].days == [END - timedelta(days=1), END]


def test_a_real_drop_in_one_segment_is_not_late_data() -> None:
    t = table()
    t.loc[(t["date"] >= END - timedelta(days=1)) & (t["country"] == "US"), "revenue"] *= 0.1
    assert all(i.detail != "incomplete_recent_data" for i in check(t).issues)


def test_nulls_and_negatives_appearing_in_the_window() -> None:
    t = table()
    recent = t.index[t["date"] >= END - timedelta(days=2)]
    t.loc[recent[:4], "revenue"] = np.nan
    t.loc[recent[4:6], "revenue"] = -50.0
    details = {i.detail for i in check(t).issues}
    assert {"null_values", "negative_values"} <= details


def test_a_few_percent_of_copied_rows_hidden_in_ordinary_row_count_swings_are_found() -> None:
    """Event rows whose count swings 30% between weekdays and weekends; on three days of the
    window 8% of the rows are exact copies: the row count alone never stands out."""
    rng = np.random.default_rng(21)
    days = pd.date_range(END - timedelta(days=69), END, freq="D")
    parts = []
    for d in days:
        n = int(rng.poisson(3000) * (1.3 if d.day_of_week >= 5 else 1.0))
        cells = {"country": rng.choice(["US", "DE", "FR"], n), "platform": rng.choice(["ios", "web"], n)}
        ids, amounts = rng.integers(0, 10**9, n), rng.gamma(2, 20, n).round(2)
        parts.append(pd.DataFrame({"date": d, **cells, "order_id": ids, "revenue": amounts}))
    frame = pd.concat(parts, ignore_index=True)
    copied_days = [END - timedelta(days=k) for k in (2, 3, 4)]
    on = frame["date"].dt.date.isin(copied_days)
    frame = pd.concat([frame, frame[on].sample(frac=0.08, random_state=1)], ignore_index=True)
    report = quality_checks(open_table(frame, "date"), spec())
    dup = [i for i in report.issues if i.detail == "duplicates"]
    assert dup and sorted(dup[0].days) == sorted(copied_days), report.issues
    assert dup[0].effect > 0


def events(copied: bool) -> pd.DataFrame:
    """Cancellations as stored: one row per flight, stamped to the minute, with its route and no
    id. On a storm day 400 flights of 250 routes are cancelled: a route's flights are alike once
    cut to the day (copies, by the look of it, a few times each), distinct as stored. `copied`:
    that day's rows also loaded twice (true copies)."""
    rng = np.random.default_rng(3)
    parts = []
    for d in range(60):
        day = pd.Timestamp(END - timedelta(days=59 - d))
        n = 400 if d == 57 else int(rng.poisson(20))  # the storm, two days before the end
        minutes = rng.choice(24 * 60, size=n, replace=False)
        parts.append(pd.DataFrame({
            "date": day + pd.to_timedelta(minutes, unit="min"),
            "country": rng.choice(["US", "DE"], n), "platform": "web", "revenue": 1.0,
            "route": rng.integers(0, 250, n),
        }))  # fmt: skip
    t = pd.concat(parts, ignore_index=True)
    storm = t["date"].dt.date == END - timedelta(days=2)
    return pd.concat([t, t[storm]], ignore_index=True) if copied else t


def test_events_alike_on_one_day_are_no_copies() -> None:
    """Duplicates are judged on the rows as stored: 400 cancellations of one day are not copied
    rows because their timestamps, cut to the day, are equal (three storms were blamed on
    copies that did not exist)."""
    assert "duplicates" not in [i.detail for i in check(events(copied=False)).issues]


def test_copies_of_stamped_rows_are_still_found() -> None:
    copies = [i for i in check(events(copied=True)).issues if i.detail == "duplicates"]
    assert [i.effect for i in copies] == [pytest.approx(400.0)]
