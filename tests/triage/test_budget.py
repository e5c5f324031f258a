"""Choosing what to investigate: one run per metric, best first, within the budget; a run that
raises is recorded and the others finish. A fake `investigate` (the seam) keeps these instant."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

from investigator.config import load_settings
from investigator.report.model import BaselinePeriod, MovementSummary, Period, Report, Stats
from investigator.request import Request
from investigator.triage.alerts import group
from investigator.triage.config import TriageConfig
from investigator.triage.job import plan_jobs
from investigator.triage.runs import investigate_all
from investigator.triage.scan import ScanItem, ranked
from investigator.triage.secrets import Redactor
from investigator.triage.state import TriageState, anomaly_key

END = date(2026, 3, 29)


def item(
    metric: str, change: float, segment: dict[str, str] | None = None, score: float | None = -5.0
) -> ScanItem:
    return ScanItem(
        metric=metric,
        segment=segment or {},
        change=change,
        change_pct=-0.2,
        score=score,
        flagged=True,
        window_end=END,
    )


def cfg(**kw: object) -> TriageConfig:
    return TriageConfig.model_validate({"data": "x.parquet", "metrics": ["a", "b", "c"], **kw})


def report(request: Request) -> Report:
    period = Period(start=END, end=END)
    return Report(
        run_id=f"run-{request.metric}",
        status="concluded",
        metric=request.metric,
        window=period,
        baseline=BaselinePeriod(start=END, end=END, kind="previous"),
        movement=MovementSummary(),
        conclusion="fine",
        confidence="high",
        root_causes=[],
        hypotheses=[],
        findings=[],
        stats=Stats(iterations=1, elapsed_s=0.0, planner="fake", tokens={"total": 10}),
    )


def test_one_run_per_metric_best_first_up_to_max_investigations() -> None:
    flagged = [item("a", -900), item("a", -500, {"region": "EU"}), item("b", -300), item("c", -100)]
    jobs, skipped = plan_jobs(cfg(budget={"max_investigations": 2}), group(flagged), None)
    assert [(j.item.metric, j.item.segment) for j in jobs] == [("a", {}), ("b", {})]
    assert [c.segment for c in jobs[0].covers] == [{"region": "EU"}]
    assert [(s.metric, s.reason) for s in skipped] == [("c", "budget: max_investigations")]


def test_one_budget_serves_every_metric_the_most_unusual_move_first() -> None:
    """A conversion rate's move (0.002 in its units) far outside its history goes before a revenue
    move of thousands that is barely anomalous; a move without history ranks below every scored
    one, however large (60% here), its note saying why."""
    conversion = item("conversion", -0.002, score=-9.0)
    revenue = item("revenue", -50_000.0, score=-3.2)
    fresh = ScanItem(metric="new", change=-5.0, change_pct=-0.6, flagged=True, window_end=END,
                     note="not scored: 3 earlier windows (8 needed)")  # fmt: skip
    order = ranked([revenue, fresh, conversion])
    assert [i.metric for i in order] == ["conversion", "revenue", "new"]
    jobs, skipped = plan_jobs(cfg(metrics=["conversion", "revenue", "new"], budget={"max_investigations": 1}),
                              group(order), None)  # fmt: skip
    assert [j.item.metric for j in jobs] == ["conversion"]
    assert {s.metric for s in skipped} == {"new", "revenue"}


def test_what_an_earlier_run_investigated_is_skipped_but_a_failed_one_is_retried(tmp_path: Path) -> None:
    state = TriageState(tmp_path / "s.sqlite")
    state.record(anomaly_key("a", {}, END), "run-1", "concluded", "found it")
    state.record(anomaly_key("b", {}, END), None, "failed", "broke")
    jobs, skipped = plan_jobs(cfg(), group([item("a", -900), item("b", -300)]), state)
    state.close()
    assert [j.item.metric for j in jobs] == ["b"]
    assert [(s.metric, s.reason, s.run_id) for s in skipped] == [("a", "already investigated", "run-1")]


def test_a_raising_investigation_is_recorded_and_the_time_budget_stops_new_ones(tmp_path: Path) -> None:
    def investigate(request: Request, settings: object) -> Report:
        if request.metric == "b":
            raise RuntimeError("kernel died")
        return report(request)

    config = cfg(workers=2)
    settings = load_settings(runs_dir=tmp_path / "runs", sandbox="local")
    jobs, _ = plan_jobs(config, group([item("a", -900), item("b", -300), item("c", -100)]), None)
    done, skipped = investigate_all(
        jobs, config, settings, investigate, Redactor(), time.monotonic(), lambda *a, **k: None
    )
    assert [(d.metric, d.status) for d in done] == [("a", "concluded"), ("b", "failed"), ("c", "concluded")]
    assert done[1].conclusion == "kernel died" and skipped == []
    past = time.monotonic() - 21 * 60  # started 21 minutes ago: max_minutes (20) is spent
    done, skipped = investigate_all(
        jobs, config, settings, investigate, Redactor(), past, lambda *a, **k: None
    )
    assert done == [] and {s.reason for s in skipped} == {"budget: max_minutes spent"}


def test_a_segment_with_no_rows_in_the_window_is_said_not_run() -> None:
    """A station that fell to zero: a run on its own rows would have none to explain (it ended in
    exit 3); the digest says why it was not investigated."""
    gone = ScanItem(metric="a", segment={"station": "x"}, change=-40.0, change_pct=-1.0, score=-6.0,
                    flagged=True, current=0.0, baseline=40.0, window_end=END)  # fmt: skip
    jobs, skipped = plan_jobs(cfg(), group([gone]), None)
    assert jobs == []
    assert [s.reason for s in skipped] == [
        "station=x has no rows in the window: it fell to zero, nothing within it to explain"
    ]
