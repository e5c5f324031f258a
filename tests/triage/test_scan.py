"""Detection on generated histories: a planted move is flagged, normal weeks and weekly patterns
are not, and `direction` picks which moves count."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.sources import open_data
from investigator.sources.synth import generate
from investigator.triage.config import Direction, Target
from investigator.triage.scan import ScanItem, plan_source, ranked, scan_target
from tests.triage.conftest import DIMS


def scan(path: Path, metric: str, window: str = "7d", direction: Direction = "both") -> list[ScanItem]:
    table = open_data(str(path), "date")
    windows = plan_source(table, "date", window, "previous", None)
    target = Target(
        metric=metric,
        data=str(path),
        time_column="date",
        dimensions=None,
        scan_segments=["channel"],
        direction=direction,
    )
    return scan_target(table, target, windows, threshold=3.0, top=50)


def by_segment(items: list[ScanItem]) -> dict[str, ScanItem]:
    return {next(iter(i.segment.values()), "total"): i for i in items}


def test_an_injected_drop_is_flagged_in_its_segment_and_the_total(drop: Path) -> None:
    items = by_segment(scan(drop, "sessions"))
    assert set(items) == {"total", "organic", "social", "email"}
    assert items["social"].flagged and items["social"].score is not None and items["social"].score < -3
    assert items["social"].change_pct is not None and items["social"].change_pct < -0.4
    assert items["total"].flagged
    assert not items["organic"].flagged and not items["email"].flagged
    # ranked by severity: the segment's move is the more unusual one, though the total's is larger
    assert abs(items["social"].score) > abs(items["total"].score or 0)
    assert abs(items["total"].change or 0) > abs(items["social"].change or 0)
    assert [i.segment for i in ranked(list(items.values()))] == [{"channel": "social"}, {}]


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_a_normal_week_is_not_flagged(tmp_path: Path, seed: int) -> None:
    frame, _ = generate("no_change", seed=seed, dims=DIMS, days=90)
    path = tmp_path / "flat.parquet"
    frame.to_parquet(path, index=False)
    for metric in ("sessions", "revenue", "orders/sessions"):
        items = scan(path, metric)
        assert len(items) == 4 and all(i.score is not None for i in items)
        assert [i for i in items if i.flagged] == [], metric


def test_a_weekly_pattern_is_not_an_anomaly(tmp_path: Path) -> None:
    """Weekends double: Saturday-Monday against Wednesday-Friday is a big change, every week."""
    rng = np.random.default_rng(0)
    end = date(2026, 3, 30)  # a Monday: the window is Sat..Mon, its baseline Wed..Fri
    days = [end - timedelta(days=i) for i in range(120)][::-1]
    rows = [
        {"date": d, "channel": c, "sessions": rng.poisson(1000 * (2.0 if d.weekday() >= 5 else 1.0))}
        for d in days
        for c in DIMS["channel"]
    ]
    path = tmp_path / "weekly.parquet"
    pd.DataFrame(rows).to_parquet(path, index=False)
    items = by_segment(scan(path, "sessions", window="3d"))
    # against Wed..Fri it moved +100%; the scan compares with the median of the same three weekdays
    # in the four weeks before, so the weekly pattern is not even a change
    assert items["total"].change_pct is not None and abs(items["total"].change_pct) < 0.05
    assert not any(i.flagged for i in items.values())


def test_direction_picks_which_moves_count(drop: Path) -> None:
    down = by_segment(scan(drop, "sessions", direction="down"))
    up = by_segment(scan(drop, "sessions", direction="up"))
    assert down["social"].flagged and down["total"].flagged
    assert not up["social"].flagged and not up["total"].flagged
    assert up["social"].score == down["social"].score  # same score, only the filter differs


def test_a_missing_column_is_a_clear_error(drop: Path) -> None:
    from investigator.errors import DataError

    with pytest.raises(DataError, match="column 'nope' not found"):
        scan(drop, "nope")


@pytest.fixture(scope="module")
def visits(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """90 days of visits by country and channel; in the last week, social's visits come from a third
    as many users (each visiting three times as often): its row count holds, its users drop."""
    rng = np.random.default_rng(7)
    end = date(2026, 3, 29)
    rows = []
    for back in range(90):
        day = end - timedelta(days=back)
        for channel in DIMS["channel"]:
            users = 40 if channel == "social" and back < 7 else 120
            ids = rng.integers(0, users, size=360) + 1000 * DIMS["channel"].index(channel)
            for i, uid in enumerate(ids):
                rows.append({"date": day, "channel": channel, "country": DIMS["country"][i % 4],
                             "user_id": f"u{uid}", "revenue": float(rng.gamma(2.0, 10.0))})  # fmt: skip
    frame = pd.DataFrame(rows)
    path = tmp_path_factory.mktemp("visits") / "visits.parquet"
    frame.to_parquet(path, index=False)
    return path, frame


def scan_all_segments(path: Path, metric: str) -> dict[str, ScanItem]:
    table = open_data(str(path), "date")
    windows = plan_source(table, "date", "7d", "previous", None)
    target = Target(metric=metric, data=str(path), time_column="date", dimensions=None,
                    scan_segments=["country", "channel"], direction="both")  # fmt: skip
    return by_segment(scan_target(table, target, windows, threshold=3.0, top=50))


def test_distinct_counts_counts_and_explicit_ratios_are_scanned_as_the_run_reads_them(
    visits: tuple[Path, pd.DataFrame],
) -> None:
    path, frame = visits
    week = frame[frame["date"] >= date(2026, 3, 23)]
    social = week[week["channel"] == "social"]
    users = scan_all_segments(path, "count_distinct(user_id)")
    weekly = social["user_id"].nunique()  # the users of the week, not user-days
    assert users["social"].current == weekly and users["social"].flagged
    assert users["social"].score is not None and users["social"].score < -3
    de = week[week["country"] == "DE"]  # a segment of the other dimension: its own distinct count
    assert users["DE"].current == de["user_id"].nunique()
    rows = scan_all_segments(path, "count(*)")
    assert rows["social"].current == len(social) and not rows["social"].flagged  # as many visits
    per_user = scan_all_segments(path, "sum(revenue)/count_distinct(user_id)")
    assert per_user["social"].current == pytest.approx(social["revenue"].sum() / weekly, rel=1e-6)
    assert per_user["social"].flagged and per_user["social"].change_pct is not None
    assert per_user["social"].change_pct > 1.0  # the same revenue from a third of the users


def test_several_scan_dimensions_cost_the_sum_of_their_values_not_the_product(tmp_path: Path) -> None:
    """Three dimensions of 12 x 10 x 8 values: the engine returns days x (1 + 12 + 10 + 8) rows,
    never days x 960, and each dimension's series equals its own one-dimension scan."""
    from investigator.analysis.spec import Measure
    from investigator.triage.scan import query_group

    rng = np.random.default_rng(3)
    n, days = 60_000, 30
    frame = pd.DataFrame({
        "date": [date(2026, 3, 1) + timedelta(days=int(d)) for d in rng.integers(0, days, n)],
        "a": [f"a{v}" for v in rng.integers(0, 12, n)],
        "b": [f"b{v}" for v in rng.integers(0, 10, n)],
        "c": [f"c{v}" for v in rng.integers(0, 8, n)],
        "user": [f"u{v}" for v in rng.integers(0, 5000, n)],
        "revenue": rng.gamma(2.0, 5.0, n),
    })  # fmt: skip
    path = tmp_path / "wide.parquet"
    frame.to_parquet(path, index=False)
    table = open_data(str(path), "date")
    measures = [Measure(column="revenue"), Measure(kind="count_distinct", column="user")]
    three = query_group(table, "date", ["a", "b", "c"], measures)
    assert len(three) == days * (1 + 12 + 10 + 8)
    for dim in ("a", "b", "c"):
        one = query_group(table, "date", [dim], measures)
        mine = three[three["_dim"] == dim].sort_values(["date", "_value"]).reset_index(drop=True)
        alone = one[one["_dim"] == dim].sort_values(["date", "_value"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, alone)
        expected = frame.groupby(["date", dim])["user"].nunique().sum()
        assert mine["m1"].sum() == expected  # each segment's own distinct count
