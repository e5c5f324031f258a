"""Investigating the flagged items: each a normal run (its own folder and kernel), `workers` at a
time, within the budget. One failing investigation is recorded and the others go on.

A flagged segment is investigated on its own rows (`--filter` with the segment): the run explains
the segment's move, not its metric's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import date

from pydantic import BaseModel, Field

from investigator.analysis.causes import RootCause
from investigator.config import Settings
from investigator.fmt import pct, seg
from investigator.report.model import Report
from investigator.request import Request, build_request
from investigator.triage.config import Target, TriageConfig
from investigator.triage.scan import ScanItem
from investigator.triage.secrets import Redactor

Investigate = Callable[[Request, Settings], Report]


class Investigated(BaseModel):
    """One investigation the job ran; `status` is the run's (concluded, partial) or `failed`."""

    metric: str
    segment: dict[str, str] = Field(default_factory=dict)
    run_id: str | None = None
    status: str
    conclusion: str
    confidence: str | None = None
    root_causes: list[RootCause] = Field(default_factory=list)
    report: str | None = Field(None, description="the run's report.html")
    note: str | None = None
    change_pct: float | None = None
    score: float | None = None


class Skipped(BaseModel):
    """A flagged item not investigated this run, and why."""

    metric: str
    segment: dict[str, str] = Field(default_factory=dict)
    reason: str
    change_pct: float | None = None
    score: float | None = None
    run_id: str | None = Field(None, description="the earlier run that investigated it, if any")

    @classmethod
    def of(cls, item: ScanItem, reason: str, run_id: str | None = None) -> Skipped:
        return cls(
            metric=item.metric,
            segment=item.segment,
            reason=reason,
            change_pct=item.change_pct,
            score=item.score,
            run_id=run_id,
        )


@dataclass
class Job:
    """A flagged item to investigate, and the other flagged items its run covers."""

    item: ScanItem
    target: Target
    covers: list[ScanItem] = field(default_factory=list)


def top_cause(causes: list[RootCause]) -> str:
    """The first root cause in a few words, `segment_change in country=DE (62%)`, and for a metric
    with a driver tree the driver that moved: `...; sessions fell (100%)`."""
    if not causes:
        return ""
    c = causes[0]
    share = f" ({c.contribution:.0%})" if c.contribution is not None else ""
    where = f" in {seg(c.segment)}" if c.segment else ""
    detail = f" ({c.detail})" if c.detail else ""
    drivers = [d for d in causes[1:] if d.kind == "driver_change" and d.driver]
    moved = "".join(
        f"; {d.driver} {'fell' if (d.change or 0) < 0 else 'rose'}"
        + (f" ({d.contribution:.0%})" if d.contribution is not None else "")
        for d in drivers[:1]
    )
    if c.kind == "driver_change" and c.driver:
        return f"{c.driver} {'fell' if (c.change or 0) < 0 else 'rose'}{share}"
    return f"{c.kind}{detail}{where}{share}{moved}"


def request_for(job: Job, config: TriageConfig, end: date) -> Request:
    item, t = job.item, job.target
    z = "n/a" if item.score is None else f"{item.score:+.1f}"
    what = f"{t.metric} moved {pct(item.change_pct)} (robust z {z})"
    where = f" in {seg(item.segment)}" if item.segment else ""
    return build_request(
        t.metric,
        t.data,
        config.window,
        None if config.window.is_range else end,  # a range says its end
        config.baseline,
        t.time_column,
        t.dimensions,
        f"Why did {what}{where}? Flagged by the scheduled triage.",
        table=t.table,
        sql=t.sql,
        filter=item.segment or None,
        semantic_manifest=t.semantic_manifest,  # its definition and filter, and the segment's rows
    )


def investigate_all(
    jobs: list[Job],
    config: TriageConfig,
    settings: Settings,
    investigate: Investigate,
    redact: Redactor,
    started: float,
    log: Callable[..., None],
) -> tuple[list[Investigated], list[Skipped]]:
    """Run the jobs in order of rank, `workers` at a time; no new run starts once the time or
    token budget is spent (those jobs are skipped with the reason)."""
    budget = config.budget
    deadline = started + budget.max_minutes * 60
    share = budget.max_tokens // max(len(jobs), 1) if budget.max_tokens else None
    run_settings = settings.model_copy(update={"max_tokens_per_run": share}) if share else settings
    done: dict[int, Investigated] = {}  # by rank, whatever order they finish in
    skipped: list[Skipped] = []
    tokens = 0
    queue = list(enumerate(jobs))
    running: dict[Future[Report], tuple[int, Job]] = {}
    with ThreadPoolExecutor(config.workers, thread_name_prefix="triage") as pool:
        while queue or running:
            while queue and len(running) < config.workers:
                reason = _spent(deadline, tokens, budget.max_tokens)
                if reason:
                    skipped += [Skipped.of(j.item, reason) for _, j in queue]
                    queue.clear()
                    break
                rank, job = queue.pop(0)
                end = job.item.window_end or date.today()
                try:
                    request = request_for(job, config, end)
                except Exception as e:  # a bad metric name: this job fails, the others go on
                    done[rank] = _failed(job, e, redact)
                    continue
                log("investigating", metric=job.item.metric, segment=seg(job.item.segment))
                running[pool.submit(investigate, request, run_settings)] = (rank, job)
            if not running:
                continue
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for future in finished:
                rank, job = running.pop(future)
                error = future.exception()
                if error is not None:
                    done[rank] = _failed(job, error, redact)
                    log("investigation failed", metric=job.item.metric, error=redact(str(error)))
                    continue
                report = future.result()
                tokens += report.stats.tokens.total
                done[rank] = _from_report(job, report, settings, redact)
                log("investigated", metric=job.item.metric, run_id=report.run_id, status=report.status)
    return [done[k] for k in sorted(done)], skipped


def _spent(deadline: float, tokens: int, max_tokens: int | None) -> str | None:
    if time.monotonic() >= deadline:
        return "budget: max_minutes spent"
    if max_tokens is not None and tokens >= max_tokens:
        return "budget: max_tokens spent"
    return None


def _failed(job: Job, error: BaseException, redact: Redactor) -> Investigated:
    text = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
    return Investigated(
        metric=job.item.metric,
        segment=job.item.segment,
        status="failed",
        conclusion=redact(text),
        change_pct=job.item.change_pct,
        score=job.item.score,
    )


def _from_report(job: Job, report: Report, settings: Settings, redact: Redactor) -> Investigated:
    return Investigated(
        metric=job.item.metric,
        segment=job.item.segment,
        run_id=report.run_id,
        status=report.status,
        conclusion=redact(report.conclusion),
        confidence=report.confidence,
        root_causes=report.root_causes,
        report=str(settings.runs_dir / report.run_id / "report.html"),
        change_pct=job.item.change_pct,
        score=job.item.score,
    )
