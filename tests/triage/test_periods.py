"""Triage with the trailing average baseline (`baseline: avg4`): the scan's baseline is the mean of
the four windows before, for the total and each scanned segment, the same number `investigate`
gives; the whole job flags the planted segment and its investigation compares with avg4 too.
A window range in a config refuses an `end` beside it."""

from __future__ import annotations

import json
import os
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from investigator.analysis.movement import movement
from investigator.analysis.queries import daily_totals
from investigator.front.cli import app
from investigator.sources import open_data
from investigator.triage.config import Target
from investigator.triage.scan import plan_source, scan_target

WEEK = (date(2026, 3, 23), date(2026, 3, 29))


def mean_of_four(df: pd.DataFrame, column: str) -> float:
    days = pd.to_datetime(df["date"]).dt.date
    sums = []
    for k in range(1, 5):
        start = WEEK[0] - timedelta(days=7 * k)
        sums.append(df.loc[(days >= start) & (days <= start + timedelta(days=6)), column].sum())
    return float(sum(sums) / 4)


@pytest.mark.parametrize("metric", ["sessions", "orders/sessions"])
def test_the_scan_baseline_is_the_mean_of_the_four_windows(drop: Path, metric: str) -> None:
    table = open_data(str(drop), "date")
    windows = plan_source(table, "date", "7d", "avg4", None)
    assert (windows.baseline.start, windows.baseline.end) == (date(2026, 2, 23), date(2026, 3, 22))
    target = Target(metric=metric, data=str(drop), time_column="date", dimensions=None,
                    scan_segments=["channel"], direction="both")  # fmt: skip
    items = {next(iter(i.segment.values()), "total"): i for i in scan_target(table, target, windows, 3.0, 50)}
    frame = pd.read_parquet(drop)
    social = frame[frame["channel"] == "social"]
    if metric == "sessions":
        assert items["total"].baseline == pytest.approx(mean_of_four(frame, "sessions"), rel=1e-6)
        assert items["social"].baseline == pytest.approx(mean_of_four(social, "sessions"), rel=1e-6)
        assert items["social"].flagged and not items["organic"].flagged
    else:  # a ratio over the four windows: their orders over their sessions (sessions fell: not it)
        assert items["social"].baseline == pytest.approx(
            mean_of_four(social, "orders") / mean_of_four(social, "sessions"), rel=1e-5
        )
    # the vectorised daily scan scores as `analysis.movement` does, series by series
    spec_daily = daily_totals(table, _spec(windows, metric))
    m = movement(spec_daily, _spec(windows, metric))
    assert items["total"].baseline == pytest.approx(m.baseline, rel=1e-6)
    assert items["total"].change_pct == pytest.approx(m.change_pct, abs=1e-6)


def _spec(windows, metric):  # type: ignore[no-untyped-def]
    from investigator.analysis.spec import AnalysisSpec

    num, _, den = metric.partition("/")
    return AnalysisSpec(
        metric=metric, numerator=num, denominator=den or None, current=windows.current,
        baseline=windows.baseline, baseline_kind="avg4", grain="day",
        computed={},
    )  # fmt: skip


def test_a_triage_job_with_avg4(drop: Path, tmp_path: Path) -> None:
    body = {
        "data": str(drop), "time_column": "date", "window": "7d", "baseline": "avg4",
        "dimensions": ["country", "channel"], "metrics": ["sessions"], "scan_segments": ["channel"],
        "budget": {"max_investigations": 1, "max_minutes": 10}, "workers": 1, "planner": "offline",
        "sandbox": "local", "max_iterations": 10, "state": str(tmp_path / "state.sqlite"),
        "runs_dir": str(tmp_path / "runs"),
    }  # fmt: skip
    path = tmp_path / "triage.yaml"
    path.write_text(yaml.safe_dump(body))
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        out = CliRunner().invoke(app, ["triage", "--config", str(path), "--json", str(tmp_path / "d.json")])
    finally:
        os.chdir(cwd)
    assert out.exit_code in (0, 3), out.stderr
    digest = json.loads((tmp_path / "d.json").read_text())
    flagged = [s["segment"] for s in digest["scanned"] if s["flagged"]]
    assert {"channel": "social"} in flagged
    frame = pd.read_parquet(drop)
    total = next(s for s in digest["scanned"] if s["segment"] == {})
    assert total["baseline"] == pytest.approx(mean_of_four(frame, "sessions"), rel=1e-5)
    run = digest["investigated"][0]
    report = json.loads((tmp_path / "runs" / run["run_id"] / "report.json").read_text())
    assert report["baseline"]["kind"] == "avg4" and report["inputs"]["baseline"] == "avg4"
    kept = frame if not run["segment"] else frame[frame["channel"] == run["segment"]["channel"]]
    assert report["movement"]["baseline"] == pytest.approx(mean_of_four(kept, "sessions"), rel=1e-6)


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ({"baseline": "avg1"}, "`baseline`: baseline 'avg1' averages 1 windows: avgN takes N from 2 to 52"),
        ({"window": "2026-03-23..2026-03-29", "end": "2026-03-29"},
         "the range says where the window ends; drop end, or write window: 7d and end: 2026-03-29"),
    ],
)  # fmt: skip
def test_config_refusals(tmp_path: Path, extra: dict[str, str], words: str) -> None:
    path = tmp_path / "triage.yaml"
    path.write_text(yaml.safe_dump({"data": "x.csv", "metrics": ["sessions"], **extra}))
    out = CliRunner().invoke(app, ["triage", "--config", str(path)])
    assert out.exit_code == 2 and words in out.stderr, out.stderr
