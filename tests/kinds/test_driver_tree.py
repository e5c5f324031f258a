"""A driver tree: revenue = sessions x conversion x aov. The split's parts add up to the change, each
driver's values are the windows' sums as pandas gives them, and the verdict names the driver that
moved ("conversion fell; traffic held"), beside the segment where it moved."""

from __future__ import annotations

import math
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.causes import RootCause
from investigator.analysis.drivers import driver_split
from investigator.analysis.queries import open_table
from investigator.analysis.spec import AnalysisSpec, Driver, Measure, Window, parse_tree
from investigator.config import MetricDefinition
from investigator.kinds.driver_tree import described, drivers_moved
from investigator.kinds.verify import verify_causes

from ..planners.test_real_shapes import kinds, run

END = date(2026, 3, 29)
TREE = [
    Driver(name="sessions", numerator=Measure(column="sessions")),
    Driver(name="conversion", numerator=Measure(column="orders"), denominator=Measure(column="sessions")),
    Driver(name="aov", numerator=Measure(column="revenue"), denominator=Measure(column="orders")),
]


def shop(fall: str = "conversion", days: int = 90, seed: int = 2) -> pd.DataFrame:
    """Daily rows per channel: sessions, orders (3% of sessions), revenue (50 an order). In the
    last week `fall` drops 30% in the paid channel only (conversion: fewer orders from the same
    visits; sessions: fewer visits converting as before)."""
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(days):
        day = END - timedelta(days=days - 1 - d)
        for channel, visits in (("paid", 4000), ("organic", 6000), ("email", 2000)):
            sessions = visits * (1 + rng.normal(0, 0.02))
            rate, basket = 0.03 * (1 + rng.normal(0, 0.02)), 50 * (1 + rng.normal(0, 0.02))
            if d >= days - 7 and channel == "paid":
                if fall == "conversion":
                    rate *= 0.7
                else:
                    sessions *= 0.7
            orders = sessions * rate
            rows.append((day, channel, round(sessions), orders, orders * basket))
    return pd.DataFrame(rows, columns=["date", "channel", "sessions", "orders", "revenue"])


def spec() -> AnalysisSpec:
    return AnalysisSpec(
        metric="revenue", numerator="revenue", dimensions=["channel"],
        current=Window(start=END - timedelta(days=6), end=END),
        baseline=Window(start=END - timedelta(days=13), end=END - timedelta(days=7)),
        drivers=TREE,
    )  # fmt: skip


def test_the_parts_add_up_to_the_change_and_the_drivers_are_the_windows_sums() -> None:
    frame = shop()
    split = driver_split(open_table(frame, "date"), spec())
    assert split.split, split.reason
    week = frame["date"] > END - timedelta(days=7)
    before = (frame["date"] > END - timedelta(days=14)) & ~week
    now, then = frame[week].sum(numeric_only=True), frame[before].sum(numeric_only=True)
    assert split.change == pytest.approx(now["revenue"] - then["revenue"])
    assert sum(p.part for p in split.parts) == pytest.approx(split.change, rel=1e-9)
    conversion = split.part("conversion")
    assert conversion is not None
    assert conversion.current == pytest.approx(now["orders"] / now["sessions"])
    assert conversion.baseline == pytest.approx(then["orders"] / then["sessions"])
    # the log-mean split, by hand
    mean = (now["revenue"] - then["revenue"]) / math.log(now["revenue"] / then["revenue"])
    assert conversion.part == pytest.approx(mean * math.log(conversion.current / conversion.baseline))
    assert max(split.parts, key=lambda p: abs(p.part)).name == "conversion"


def test_a_tree_that_does_not_multiply_to_the_metric_is_no_split() -> None:
    wrong = [TREE[0], TREE[1]]  # sessions x conversion is orders, not revenue
    split = driver_split(open_table(shop(), "date"), spec().model_copy(update={"drivers": wrong}))
    assert not split.split and "do not multiply" in split.reason


FALLS = [("conversion", "conversion", "sessions and aov"), ("sessions", "sessions", "conversion and aov")]


@pytest.mark.parametrize(("fall", "driver", "held"), FALLS)
def test_the_verdict_names_the_driver_that_moved_and_where(
    tmp_path: Path, fall: str, driver: str, held: str
) -> None:
    rep = run(tmp_path, shop(fall), "revenue", END, window="7d")
    assert kinds(rep)[:2] == ["segment_change", "driver_change"], rep.conclusion
    assert rep.root_causes[0].segment == {"channel": "paid"}
    cause = rep.root_causes[1]
    assert cause.driver == driver and cause.verified
    assert cause.contribution is not None and cause.contribution > 0.8
    assert f"{driver} fell" in rep.conclusion and f"while {held} held" in rep.conclusion


def swinging(seed: int = 4) -> pd.DataFrame:
    """Conversion swings from week to week (each week its own level, spread 8%), sessions hardly
    (2%). In the last week sessions fall 10% and conversion sits 7% low: a week it has often had."""
    rng = np.random.default_rng(seed)
    rows, weeks = [], 13
    levels = 1 + rng.normal(0, 0.08, weeks)
    levels[-2:] = [1.0, 0.93]
    for d in range(weeks * 7):
        day = END - timedelta(days=weeks * 7 - 1 - d)
        sessions = 12000 * (1 + rng.normal(0, 0.02)) * (0.9 if d >= weeks * 7 - 7 else 1.0)
        orders = sessions * 0.03 * levels[d // 7]
        rows.append((day, "all", round(sessions), orders, orders * 50))
    return pd.DataFrame(rows, columns=["date", "channel", "sessions", "orders", "revenue"])


def test_a_driver_within_its_usual_swings_is_not_what_moved() -> None:
    """Both carry over a quarter of the fall; only sessions moved beyond its own variation."""
    split = driver_split(open_table(swinging(), "date"), spec())
    sessions, conversion = split.part("sessions"), split.part("conversion")
    assert sessions is not None and conversion is not None
    assert (sessions.share or 0) > 0.25 and (conversion.share or 0) > 0.25
    assert sessions.usual is False and sessions.z is not None and sessions.z < -3
    assert conversion.usual is True
    assert [p.name for p in drivers_moved(split)] == ["sessions"]
    assert "within its usual moves" in described(split, drivers_moved(split))


def test_the_host_refuses_a_driver_claimed_at_the_wrong_size() -> None:
    table = open_table(shop(), "date")
    empty = pd.DataFrame()
    right = RootCause(kind="driver_change", driver="conversion", contribution=0.95)
    wrong = RootCause(kind="driver_change", driver="sessions", contribution=0.9)
    unknown = RootCause(kind="driver_change", driver="visits", contribution=0.9)
    checked = verify_causes(table, empty, empty, spec(), [right, wrong, unknown])
    assert [c.ok for c in checked.checks] == [True, False, False]
    assert "not a driver" in checked.checks[2].reason


def test_a_tree_is_named_metrics_multiplied_or_divided() -> None:
    assert parse_tree("sessions * conversion / returns") == [
        ("sessions", 1),
        ("conversion", 1),
        ("returns", -1),
    ]
    for bad in ("sessions", "sessions + orders", "aov * aov"):
        with pytest.raises(ValueError):
            MetricDefinition(expression="revenue", drivers=bad)


def test_a_database_gives_the_files_split(tmp_path: Path) -> None:
    """Behind a URL the kernel reads the engine's extract: it carries the tree's sums, so the split
    is the file's to the last digit."""
    from ..sources.conftest import load_sqlite
    from ..sources.test_engines import run as run_at

    frame = shop()
    path = tmp_path / "shop.parquet"
    frame.to_parquet(path, index=False)
    load_sqlite(tmp_path / "shop.db", "shop", frame)
    on_file = run_at("revenue", str(path), tmp_path / "file")
    in_db = run_at("revenue", f"sqlite:///{tmp_path / 'shop.db'}", tmp_path / "db", table="shop")
    file_causes, db_causes = ([c for c in r.root_causes if c.driver] for r in (on_file, in_db))
    assert [c.driver for c in db_causes] == [c.driver for c in file_causes] == ["conversion"]
    assert db_causes[0].contribution == file_causes[0].contribution
    assert db_causes[0].change == pytest.approx(file_causes[0].change, rel=1e-9)
