"""An anomaly the budget defers is announced once, then its finding is sent by the run that
investigates it; nothing is marked notified that no message said. A real webhook, real data and
state; the investigation seam answers at once (the investigations are test_job's business)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from investigator.config import Settings
from investigator.report.model import BaselinePeriod, MovementSummary, Period, Report, Stats
from investigator.request import Request
from investigator.triage.config import TriageConfig
from investigator.triage.job import run_triage
from investigator.triage.state import TriageState, anomaly_key

from .test_job import write
from .webhook import Hook

END = date(2026, 3, 29)


def answer(request: Request, settings: Settings) -> Report:
    period = Period(start=END, end=END)
    return Report(
        run_id=f"run-{request.metric}",
        status="concluded",
        metric=request.metric,
        window=period,
        baseline=BaselinePeriod(start=END, end=END, kind="previous"),
        movement=MovementSummary(),
        conclusion=f"cause of {request.metric} found",
        confidence="high",
        root_causes=[],
        hypotheses=[],
        findings=[],
        stats=Stats(iterations=1, elapsed_s=0.0, planner="fake", tokens={"total": 1}),
    )


def test_a_deferred_anomaly_is_investigated_and_sent_by_the_next_run(tmp_path: Path) -> None:
    drop = write(tmp_path, "drop", "segment_change", 3, segment={"channel": "social"}, factor=0.4)
    rise = write(tmp_path, "rise", "segment_change", 7, segment={"country": "DE"}, factor=1.8)
    body: dict[str, Any] = {
        "data": drop,
        "metrics": ["revenue", {"metric": "sessions", "data": rise}],
        "scan_segments": ["channel", "country"],
        "budget": {"max_investigations": 1},
        "state": str(tmp_path / "state.sqlite"),
        "runs_dir": str(tmp_path / "runs"),
    }
    with Hook() as hook:
        config = TriageConfig.model_validate(
            {**body, "notify": [hook.url()], "report_url": "https://reports.example.com/runs/"}
        )
        runs = [run_triage(config, investigate=answer, backoff_s=0.01) for _ in range(3)]
        messages = [payload["message"] for _, payload in hook.received]
    first, second, third = runs
    [done] = first.digest.investigated
    [deferred] = {s.metric for s in first.digest.skipped if s.reason.startswith("budget")}
    assert {done.metric, deferred} == {"revenue", "sessions"}
    assert len(messages) == 2 and third.digest.notifications == []  # the third run had nothing new
    assert f"cause of {done.metric} found" in messages[0]
    assert f"https://reports.example.com/runs/run-{done.metric}/report.html" in messages[0]  # clickable
    assert second.folder is not None  # a run that skipped what an earlier one did links its report
    assert f"](../run-{done.metric}/report.html)" in (second.folder / "digest.md").read_text() or (
        f"../run-{done.metric}/report.html" in (second.folder / "digest.md").read_text()
    )
    assert f"**{deferred}** " in messages[0] and "not investigated (budget" in messages[0]
    assert [i.metric for i in second.digest.investigated] == [deferred]
    assert f"cause of {deferred} found" in messages[1] and f"cause of {done.metric}" not in messages[1]
    state = TriageState(tmp_path / "state.sqlite")
    try:
        for item in [i for i in first.digest.scanned if i.flagged]:
            seen = state.seen(anomaly_key(item.metric, item.segment, END))
            assert seen is not None and seen.notified_at and seen.summary, item
    finally:
        state.close()
