"""One triage run, top to bottom: scan every metric, pick what to investigate, investigate within
the budget, remember, notify once, write the digest."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from investigator.config import Settings, load_settings
from investigator.errors import ConfigError, DataError, UserError
from investigator.fmt import chat, pct, seg
from investigator.report.model import Report
from investigator.request import Request
from investigator.triage.checks import check_names
from investigator.triage.config import Target, TriageConfig, expand_targets
from investigator.triage.digest import Digest, write_digest
from investigator.triage.notify import AppriseNotifier, Notification, Notifier, deliver
from investigator.triage.runs import Investigate, Investigated, Job, Skipped, investigate_all, top_cause
from investigator.triage.scan import ScanItem, plan_source, ranked, scan_targets
from investigator.triage.secrets import Redactor
from investigator.triage.state import TriageState, anomaly_key, state_lock

logger = logging.getLogger("investigator.triage")
RAN, SOME_FAILED, COULD_NOT_RUN = 0, 3, 1


@dataclass
class Outcome:
    """What the command prints and exits with."""

    digest: Digest
    folder: Path | None
    exit_code: int
    title: str


def log(event: str, **fields: Any) -> None:
    logger.info(event, extra={"fields": fields})


def settings_for(config: TriageConfig) -> Settings:
    return load_settings(
        runs_dir=config.runs_dir,
        planner=config.planner,
        sandbox=config.sandbox,
        max_iterations=config.max_iterations,
    )


def scan_all(config: TriageConfig, redact: Redactor) -> list[ScanItem]:
    """Every target scanned, one engine query per source (and set of scanned dimensions). A source
    that cannot be read gives items with its `error`; a name the data does not have (a misspelt
    metric, column, time column or scan dimension) is a `ConfigError`, raised before any scan."""
    from investigator.sources import source_for

    groups: dict[tuple[str, str | None, str | None, str, tuple[str, ...]], list[Target]] = {}
    for t in config.targets():
        groups.setdefault((t.data, t.table, t.sql, t.time_column, tuple(t.scan_segments)), []).append(t)
    opened: list[tuple[list[Target], Any, Any, str | None]] = []
    try:
        for (data, table_name, sql, time_column, _), targets in groups.items():
            source = source_for(data, table_name, sql)
            try:
                table, error = source.open(time_column), None
            except (ConfigError, DataError) as e:
                if isinstance(e, ConfigError):
                    raise
                table, error = None, _first_line(e)
            opened.append((targets, source, table, error))
            if table is not None:
                check_names(list(table.schema().names), targets, redact(source.describe()))
        return [item for group in opened for item in _scan(config, *group, redact)]
    finally:
        for _, source, _, _ in opened:
            source.close()


def _scan(
    config: TriageConfig, targets: list[Target], source: Any, table: Any, error: str | None, redact: Redactor
) -> list[ScanItem]:
    started = time.monotonic()
    found = [ScanItem(metric=t.metric, error=error) for t in targets]
    if table is not None:
        time_column = targets[0].time_column
        try:
            windows = plan_source(table, time_column, config.window, config.baseline, config.end)
        except DataError as e:
            windows, found = None, [ScanItem(metric=t.metric, error=_first_line(e)) for t in targets]
        except UserError as e:  # the config's window and end reach before year 1
            raise ConfigError(str(e)) from None
        if windows is not None:
            try:
                found = scan_targets(table, targets, windows, config.threshold, config.max_segment_values)
            except Exception as e:
                found = [ScanItem(metric=t.metric, error=_first_line(e)) for t in targets]
    for item in found:
        if item.error:
            item.error = redact(item.error)
            log("scan failed", metric=item.metric, error=item.error)
    log("scanned", data=redact(source.describe()), metrics=len(targets), series=len(found),
        flagged=sum(i.flagged for i in found), seconds=round(time.monotonic() - started, 3))  # fmt: skip
    return found


def plan_jobs(
    config: TriageConfig, flagged: list[ScanItem], state: TriageState | None
) -> tuple[list[Job], list[Skipped]]:
    """The flagged items to investigate, best first: not the ones an earlier run investigated, one
    run per metric (a run covers its segments), at most `max_investigations`."""
    targets = {t.metric: t for t in config.targets()}
    jobs: dict[str, Job] = {}
    skipped: list[Skipped] = []
    for item in flagged:
        seen = state.seen(_key(item)) if state else None
        if seen is not None and seen.status not in (None, "failed"):
            told = " and notified" if seen.notified_at else ""
            skipped.append(Skipped.of(item, f"already investigated{told}", seen.run_id))
        elif item.metric in jobs:
            jobs[item.metric].covers.append(item)
        else:
            jobs[item.metric] = Job(item=item, target=targets[item.metric])
    chosen = list(jobs.values())[: config.budget.max_investigations]
    for job in list(jobs.values())[config.budget.max_investigations :]:
        skipped += [Skipped.of(i, "budget: max_investigations") for i in [job.item, *job.covers]]
    return chosen, skipped


def run_triage(
    config: TriageConfig,
    *,
    dry_run: bool = False,
    json_path: Path | None = None,
    investigate: Investigate | None = None,
    notifier: Notifier | None = None,
    backoff_s: float = 1.0,
    env: dict[str, str] | None = None,
) -> Outcome:
    """The whole job; `investigate` and `notifier` are the seams tests may replace."""
    urls, secrets = expand_targets(config.notify, env)
    redact = Redactor(secrets)
    settings = settings_for(config)
    state_path = config.state or settings.home / "triage.sqlite"
    now = datetime.now(UTC)
    scanned = scan_all(config, redact)  # read-only; a misspelt name stops the job here, nothing written
    if dry_run:
        return _dry_run(config, scanned, json_path, now)
    with state_lock(state_path):
        state = TriageState(state_path)
        try:
            return _run(
                config,
                scanned,
                settings,
                state,
                urls,
                redact,
                json_path,
                now,
                investigate,
                notifier or AppriseNotifier(),
                backoff_s,
            )
        finally:
            state.close()


def _dry_run(config: TriageConfig, scanned: list[ScanItem], json_path: Path | None, now: datetime) -> Outcome:
    skipped = [Skipped.of(i, "dry run") for i in ranked(scanned, config.threshold)]
    digest = Digest(scanned=scanned, skipped=skipped)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(digest.model_dump_json(indent=2))
    return Outcome(digest, None, _exit_code(digest), _title(config, scanned, now, dry=True))


def _run(
    config: TriageConfig,
    scanned: list[ScanItem],
    settings: Settings,
    state: TriageState,
    urls: list[str],
    redact: Redactor,
    json_path: Path | None,
    now: datetime,
    investigate: Investigate | None,
    notifier: Notifier,
    backoff_s: float,
) -> Outcome:
    started = time.monotonic()
    flagged = ranked(scanned, config.threshold)
    jobs, skipped = plan_jobs(config, flagged, state)
    investigated, over_budget = investigate_all(
        jobs, config, settings, investigate or _run_one, redact, started, log
    )
    skipped += over_budget
    by_metric = {i.metric: i for i in investigated}
    for job in jobs:
        done = by_metric.get(job.item.metric)
        if done is None:
            continue
        for item in [job.item, *job.covers]:
            state.record(_key(item), done.run_id, done.status, _summary(done, config.report_url))
        covered = f"covered by the run for {job.item.metric} {seg(job.item.segment)}"
        skipped += [Skipped.of(i, covered, done.run_id) for i in job.covers]
    title = _title(config, scanned, now)
    notifications = _notify(flagged, state, urls, title, investigated, skipped, notifier, redact, backoff_s)
    digest = Digest(scanned=scanned, investigated=investigated, skipped=skipped, notifications=notifications)
    folder = write_digest(digest, _folder(settings.runs_dir, now), title, json_path)
    log("digest written", folder=str(folder), exit_code=_exit_code(digest))
    return Outcome(digest, folder, _exit_code(digest), title)


def _notify(
    flagged: list[ScanItem],
    state: TriageState,
    urls: list[str],
    title: str,
    investigated: list[Investigated],
    skipped: list[Skipped],
    notifier: Notifier,
    redact: Redactor,
    backoff_s: float,
) -> list[Notification]:
    """One message about what nobody was told yet: each finding not sent before (this run's, or a
    run's whose message failed), and each anomaly seen for the first time (a deferred one said as
    not investigated). Only findings are marked notified: a deferred anomaly's finding is sent by
    the run that investigates it. Nothing new, no message."""
    seen = {_key(i): state.seen(_key(i)) for i in flagged}
    found = [i for i in flagged if (s := seen[_key(i)]) and s.summary and not s.notified_at]
    fresh = [i for i in flagged if seen[_key(i)] is None]
    said = {_key(i) for i in [*found, *fresh]}
    new = [i for i in flagged if _key(i) in said]
    if not new or not urls:
        return []
    lines = []
    for item in new:
        told = seen[_key(item)]
        why = (s.reason for s in skipped if (s.metric, s.segment) == (item.metric, item.segment))
        reason = next(why, "")
        finding = (told.summary if told else None) or f"not investigated ({reason or 'budget'})"
        z = "n/a" if item.score is None else f"{item.score:+.1f}"
        what = f"**{chat(item.metric)}** {chat(seg(item.segment))}"  # data is shown, never a mention or link
        lines.append(f"- {what}: {pct(item.change_pct)} (z {z}) — {chat(finding)}")
    failed = sum(1 for i in investigated if i.status == "failed")
    body = "\n".join(
        [
            f"{len(new)} anomalies, {len(found)} with findings, {len(investigated)} investigated this run"
            + (f", {failed} failed" if failed else ""),
            "",
            *lines,
        ]
    )
    sent = deliver(urls, title, redact(body), notifier, redact, backoff_s=backoff_s)
    for n in sent:
        event = "notified" if n.ok else "notification failed"
        log(event, target=n.target, error=n.error, attempts=n.attempts)
    if any(n.ok for n in sent):
        state.mark_notified([_key(i) for i in found])
        state.note([_key(i) for i in fresh])  # a finding's row is there already
    return sent


def _run_one(request: Request, settings: Settings) -> Report:
    """One investigation; a kernel another run in this job left is reset and reused (never shared
    by two runs at once), which saves the sandbox's start-up on every run after the first."""
    from investigator.runner import investigate

    return investigate(request, settings, reuse_kernel=True)


def _summary(done: Investigated, report_url: str | None = None) -> str:
    """What a message says of an investigation, with a link anyone can open from a chat: under
    `report_url` when the runs folder is served, else the report's absolute path."""
    if done.status == "failed":
        return f"investigation failed: {done.conclusion}"
    cause = top_cause(done.root_causes) or done.conclusion
    link = done.report and str(Path(done.report).resolve())
    if done.report and report_url and done.run_id:
        link = f"{report_url.rstrip('/')}/{done.run_id}/report.html"
    return f"{done.status} ({done.confidence}): {cause}" + (f" — {link}" if link else "")


def _key(item: ScanItem) -> tuple[str, str, str]:
    assert item.window_end is not None  # flagged items were scanned, so they have windows
    return anomaly_key(item.metric, item.segment, item.window_end)


def _exit_code(d: Digest) -> int:
    errors = [s for s in d.scanned if s.error]
    if d.scanned and len(errors) == len(d.scanned):
        return COULD_NOT_RUN
    if errors or any(i.status == "failed" for i in d.investigated):
        return SOME_FAILED
    return RAN


def _title(config: TriageConfig, scanned: list[ScanItem], now: datetime, dry: bool = False) -> str:
    ends = sorted({(s.window_start, s.window_end) for s in scanned if s.window_end})
    span = ", ".join(f"{a}..{b}" for a, b in ends) or "no window"
    return f"Triage {now:%Y-%m-%d %H:%M} UTC{' (dry run)' if dry else ''}: {config.window} window {span}"


def _folder(runs_dir: Path, now: datetime) -> Path:
    base = runs_dir / f"triage-{now:%Y%m%dT%H%M%SZ}"
    folder, n = base, 1
    while folder.exists():
        n += 1
        folder = base.with_name(f"{base.name}-{n}")
    return folder


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


__all__ = ["COULD_NOT_RUN", "RAN", "SOME_FAILED", "Outcome", "run_triage", "scan_all"]
