"""Measures beyond sums: counts and distinct counts (active users), and ratios of them, defined in
metrics.yaml. A distinct count is counted by the engine over the whole window and per segment, never
added up from days or smaller segments: users active on two platforms or on several days count once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.spec import parse_measure
from investigator.errors import UserError
from investigator.request import metric_definition

from .conftest import findings, load_duckdb, load_sqlite, same
from .test_engines import run

METRICS = """\
metrics:
  dau:
    expression: count_distinct(user_id)
    dimensions: [country, platform]
  arpu:
    expression: sum(revenue)/count_distinct(user_id)
    dimensions: [country, platform]
  events:
    expression: count(*)
    dimensions: [country, platform]
  dau_warehouse:
    expression: count_distinct(user_id)
    dimensions: [country, platform]
    data: env:ACTIVITY_DB_URL
    table: activity
"""


def activity(days: int = 56, users: int = 600, seed: int = 1) -> pd.DataFrame:
    """Users with a home country, active some days on one or both platforms; from the last week on,
    German users are active half as often (the planted cause)."""
    rng = np.random.default_rng(seed)
    home = rng.choice(["DE", "FR", "US"], users)
    rows = []
    start = pd.Timestamp("2026-02-02")
    for d in range(days):
        day = (start + pd.Timedelta(days=d)).date()
        p = np.where((home == "DE") & (d >= days - 7), 0.2, 0.4)
        for u in np.flatnonzero(rng.random(users) < p):
            both = rng.random() < 0.3  # a user on both platforms that day
            for platform in ["ios", "web"] if both else [rng.choice(["ios", "web"])]:
                for _ in range(int(rng.integers(1, 3))):  # several events per user and platform
                    rows.append((day, home[u], platform, f"u{u}", round(float(rng.gamma(2, 5)), 2)))
    return pd.DataFrame(rows, columns=["date", "country", "platform", "user_id", "revenue"])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, pd.DataFrame]:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "metrics.yaml").write_text(METRICS)
    monkeypatch.setenv("INVESTIGATOR_CONFIG_DIR", str(tmp_path / "configs"))
    frame = activity()
    path = tmp_path / "activity.parquet"
    frame.to_parquet(path, index=False)
    return path, frame


def window_dau(frame: pd.DataFrame, start: str, end: str) -> float:
    """The window's distinct users."""
    part = frame[(frame["date"] >= pd.Timestamp(start).date()) & (frame["date"] <= pd.Timestamp(end).date())]
    return float(part["user_id"].nunique())


def user_days(frame: pd.DataFrame, start: str, end: str) -> float:
    """Each day's distinct users, added over the window's days."""
    part = frame[(frame["date"] >= pd.Timestamp(start).date()) & (frame["date"] <= pd.Timestamp(end).date())]
    return float(part.groupby("date")["user_id"].nunique().sum())


def test_distinct_count_movement_is_counted_never_summed(project: tuple[Path, pd.DataFrame]) -> None:
    path, frame = project
    report = run("dau", str(path), path.parent / "runs")
    cur, base = report.window, report.baseline
    assert report.movement.current == window_dau(frame, str(cur.start), str(cur.end))
    assert report.movement.baseline == window_dau(frame, str(base.start), str(base.end))
    assert user_days(frame, str(cur.start), str(cur.end)) > report.movement.current  # not user-days
    part = frame[frame["date"] >= cur.start]
    summed = float(part.groupby("platform")["user_id"].nunique().sum())
    assert summed > report.movement.current  # adding the platforms' counts would overcount
    assert any("a value in two segments" in n for n in report.notes)  # what the segment table means
    assert report.root_causes and report.root_causes[0].segment == {"country": "DE"}


def test_distinct_counts_from_a_database_match_the_file(project: tuple[Path, pd.DataFrame]) -> None:
    path, _ = project
    db = path.parent / "activity.ddb"
    load_duckdb(db, "activity", path)
    for metric in ("dau", "arpu", "events"):
        reference = run(metric, str(path), path.parent / "runs")
        got = run(metric, f"duckdb:///{db}", path.parent / "runs", table="activity")
        assert same(findings(reference), findings(got)) == [], metric


def test_window_distinct_counts_from_sqlite_match_the_file(project: tuple[Path, pd.DataFrame]) -> None:
    path, frame = project
    db = path.parent / "activity.sqlite"
    load_sqlite(db, "activity", frame)
    for metric in ("dau", "arpu"):
        reference = run(metric, str(path), path.parent / "runs")
        got = run(metric, f"sqlite:///{db}", path.parent / "runs", table="activity")
        assert same(findings(reference), findings(got)) == [], metric


def test_a_metric_names_its_own_source(
    project: tuple[Path, pd.DataFrame], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = project
    load_duckdb(path.parent / "activity.ddb", "activity", path)
    monkeypatch.setenv("ACTIVITY_DB_URL", f"duckdb:///{path.parent / 'activity.ddb'}")
    reference = run("dau", str(path), path.parent / "runs")
    got = run("dau_warehouse", None, path.parent / "runs")
    keys = ("movement", "root_causes", "segments")  # the conclusion names the metric
    picked = [{k: findings(r)[k] for k in keys} for r in (reference, got)]
    assert same(picked[0], picked[1]) == []


def test_ratio_of_sum_and_distinct_count(project: tuple[Path, pd.DataFrame]) -> None:
    path, frame = project
    report = run("arpu", str(path), path.parent / "runs")
    cur = report.window
    part = frame[(frame["date"] >= cur.start) & (frame["date"] <= cur.end)]
    expected = part["revenue"].sum() / window_dau(frame, str(cur.start), str(cur.end))
    assert report.movement.current == pytest.approx(expected)


def test_measure_expressions() -> None:
    assert parse_measure("count(*)").name == "count"
    assert parse_measure("count").kind == "count"
    assert parse_measure("count_distinct(user_id)").name == "distinct_user_id"
    assert parse_measure("sum(revenue)").name == "revenue" == parse_measure("revenue").name
    assert parse_measure("count_distinct_daily(user_id)").name == "distinct_daily_user_id"
    assert metric_definition("avg(revenue)").expression == "avg(revenue)"
    with pytest.raises(UserError, match="not supported: a maximum"):
        metric_definition("max(revenue)")
