"""One triage run, top to bottom: scan every metric, pick what to investigate, investigate within
the budget, remember, notify once, write the digest."""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from investigator.config import Settings, load_settings
from investigator.errors import ConfigError, DataError, UserError
from investigator.fmt import seg
from investigator.report.model import Report
from investigator.request import Request
from investigator.triage.alerts import Alert, group
from investigator.triage.announce import Key, Told, notify
from investigator.triage.checks import check_names
from investigator.triage.config import Target, TriageConfig, expand_targets
from investigator.triage.digest import Digest, write_digest
from investigator.triage.episodes import Episode, follow, series_key
from investigator.triage.freshness import Stale, seen, stale
from investigator.triage.notify import AppriseNotifier, Notifier
from investigator.triage.runs import Investigate, Investigated, Job, Skipped, investigate_all, top_cause
from investigator.triage.scan import ScanItem, plan_dates, ranked, scan_targets
from investigator.triage.secrets import Redactor
from investigator.triage.state import TriageState, anomaly_key, state_lock

logger = logging.getLogger("investigator.triage")
RAN, SOME_FAILED, COULD_NOT_RUN = 0, 3, 1
ZERO = "it fell to zero, nothing within it to explain"


@dataclass
class Outcome:
    """What the command prints and exits with."""

    digest: Digest
    folder: Path | None
    exit_code: int
    title: str


def log(event: str, level: int = logging.INFO, **fields: Any) -> None:
    logger.log(level, event, extra={"fields": fields})


@dataclass
class Source:
    """A scanned source's last day, and the end its window was asked to have (None: the last day)."""

    name: str
    last: date
    end: date | None
    end_has_rows: bool = True


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
    return scan_sources(config, redact)[0]


def scan_sources(config: TriageConfig, redact: Redactor) -> tuple[list[ScanItem], list[Source]]:
    """`scan_all`, with each readable source's last day (to tell a load that did not arrive)."""
    from investigator.sources import source_for

    groups: dict[tuple[str, str | None, str | None, str, tuple[str, ...], str | None], list[Target]] = {}
    for t in config.targets():
        key = (t.data, t.table, t.sql, t.time_column, tuple(t.scan_segments), t.filter)
        groups.setdefault(key, []).append(t)
    opened: list[tuple[list[Target], Any, Any, str | None]] = []
    try:
        for (data, table_name, sql, time_column, _, where), targets in groups.items():
            source = source_for(data, table_name, sql)
            try:
                table, error = _rows_of(source.open(time_column), where), None
            except (ConfigError, DataError) as e:
                if isinstance(e, ConfigError):
                    raise
                table, error = None, _first_line(e)
            opened.append((targets, source, table, error))
            if table is not None:
                check_names(list(table.schema().names), targets, redact(source.describe()))
        items: list[ScanItem] = []
        sources: dict[str, Source] = {}
        for group_ in opened:
            found, known = _scan(config, *group_, redact)
            items += found
            if known is not None:
                sources.setdefault(known.name, known)
        return items, list(sources.values())
    finally:
        for _, source, _, _ in opened:
            source.close()


def _rows_of(table: Any, where: str | None) -> Any:
    """The rows a metric counts: all, or those its semantic-layer filter keeps (checked against
    the table's columns, rebuilt as Ibis, as `--filter` is)."""
    if where is None:
        return table
    from investigator.analysis.reading import filtered
    from investigator.sources.filters import parse_filter

    try:
        return filtered(table, parse_filter(where, table, flag=""))
    except UserError as e:
        raise DataError(f"the metric's filter {where!r}: {e}") from None


def _scan(
    config: TriageConfig, targets: list[Target], source: Any, table: Any, error: str | None, redact: Redactor
) -> tuple[list[ScanItem], Source | None]:
    from investigator.sources.windows import distinct_dates

    started = time.monotonic()
    found = [ScanItem(metric=t.metric, error=error) for t in targets]
    known = None
    if table is not None:
        time_column = targets[0].time_column
        try:
            dates = distinct_dates(table, time_column)
            if dates:
                name = f"{redact(source.describe())} ({time_column})"
                known = Source(name, dates[-1], config.end, config.end is None or config.end in set(dates))
            windows = plan_dates(dates, config.window, config.baseline, config.end) if dates else None
            if windows is None:
                raise DataError("the data has no rows with a date")
        except DataError as e:
            windows, found = None, [ScanItem(metric=t.metric, error=_first_line(e)) for t in targets]
        except UserError as e:  # the config's window and end reach before year 1
            raise ConfigError(str(e)) from None
        if windows is not None:
            try:
                found = scan_targets(
                    table, targets, windows, config.threshold, config.max_segment_values, config.scoring()
                )
            except Exception as e:
                found = [ScanItem(metric=t.metric, error=_first_line(e)) for t in targets]
    for item in found:
        if item.error:
            item.error = redact(item.error)
            log("scan failed", logging.ERROR, metric=item.metric, error=item.error)
    log("scanned", data=redact(source.describe()), metrics=len(targets), series=len(found),
        flagged=sum(i.flagged for i in found), seconds=round(time.monotonic() - started, 3))  # fmt: skip
    return found, known


def plan_jobs(
    config: TriageConfig, alerts: list[Alert], state: TriageState | None, key: Key | None = None
) -> tuple[list[Job], list[Skipped]]:
    """One investigation per alert, best first: its head (the total when it is flagged), covering
    the segments grouped under it that its run looks at; not an alert an earlier run investigated
    (the same episode), nor one labelled expected; at most `max_investigations`."""
    key = key or _key
    targets = {t.metric: t for t in config.targets()}
    jobs: list[Job] = []
    skipped: list[Skipped] = []
    for alert in alerts:
        head, members = alert.head, alert.members
        if head.expected and not config.notify_expected:
            why = f"expected: the same window moved alike in {head.expected} earlier years"
            skipped += [Skipped.of(i, why) for i in [head, *members]]
            continue
        seen_ = state.seen(key(head)) if state else None
        if seen_ is not None and seen_.status not in (None, "failed"):
            told = " and notified" if seen_.notified_at else ""
            skipped += [Skipped.of(i, f"already investigated{told}", seen_.run_id) for i in [head, *members]]
            continue
        if head.segment and head.current == 0:  # a run on its rows would find none to explain
            why = f"{seg(head.segment)} has no rows in the window: {ZERO}"
            skipped += [Skipped.of(i, why) for i in [head, *members]]
            continue
        target = targets[head.metric]
        looked = [m for m in members if not head.segment and _looks_at(target, m)]
        jobs.append(Job(item=head, target=target, covers=looked))
        where = f"{head.metric} {seg(head.segment)}"
        skipped += [
            Skipped.of(m, f"grouped under {where}; its run did not look at {seg(m.segment)}")
            for m in members
            if m not in looked
        ]
    chosen = jobs[: config.budget.max_investigations]
    for job in jobs[config.budget.max_investigations :]:
        skipped += [Skipped.of(i, "budget: max_investigations") for i in [job.item, *job.covers]]
    return chosen, skipped


def _looks_at(target: Target, item: ScanItem) -> bool:
    """Whether a run on the whole metric reads the item's segment: its dimension is one the run
    explains by (every column when the config names none)."""
    return target.dimensions is None or all(d in target.dimensions for d in item.segment)


def run_triage(
    config: TriageConfig,
    *,
    dry_run: bool = False,
    json_path: Path | None = None,
    investigate: Investigate | None = None,
    notifier: Notifier | None = None,
    backoff_s: float = 1.0,
    env: dict[str, str] | None = None,
    now: datetime | None = None,
) -> Outcome:
    """The whole job; `investigate` and `notifier` are the seams tests may replace, `now` the
    morning it runs (a replay's)."""
    urls, secrets = expand_targets(config.notify, env)
    redact = Redactor(secrets)
    settings = settings_for(config)
    state_path = config.state or settings.home / "triage.sqlite"
    now = now or datetime.now(UTC)
    scanned, sources = scan_sources(config, redact)  # read-only; a misspelt name stops the job here
    if dry_run:
        stales = [x for s in sources if (x := stale(s.name, s.last, s.end, None, now.date(), s.end_has_rows))]
        return _dry_run(config, scanned, stales, json_path, now)
    with state_lock(state_path):
        state = TriageState(state_path)
        try:
            return _run(
                config,
                scanned,
                sources,
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


def _dry_run(
    config: TriageConfig, scanned: list[ScanItem], stales: list[Stale], json_path: Path | None, now: datetime
) -> Outcome:
    skipped = [Skipped.of(i, "dry run") for i in ranked(scanned, config.threshold)]
    digest = Digest(scanned=scanned, skipped=skipped, stale=stales)
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(digest.model_dump_json(indent=2))
    return Outcome(digest, None, _exit_code(digest), _title(config, scanned, now, dry=True))


def _run(
    config: TriageConfig,
    scanned: list[ScanItem],
    sources: list[Source],
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
    alerts = group(scanned, config.threshold)
    lengths = [(i.window_end - i.window_start).days + 1 for i in scanned if i.window_end and i.window_start]
    days = max(lengths, default=1)
    changes = follow(state.open_episodes(), scanned, config.threshold, days)
    opened = {c.episode.series: c.episode.first_end for c in changes if c.item is not None}

    def key(item: ScanItem) -> tuple[str, str, str]:
        assert item.window_end is not None  # flagged items were scanned, so they have windows
        first = opened.get(series_key(item.metric, item.segment), item.window_end)
        return anomaly_key(item.metric, item.segment, first)

    jobs, skipped = plan_jobs(config, alerts, state, key)
    investigated, over_budget = investigate_all(
        jobs, config, settings, investigate or _run_one, redact, started, log
    )
    skipped += over_budget
    by_head = {(i.metric, json.dumps(i.segment, sort_keys=True)): i for i in investigated}
    for job in jobs:
        done = by_head.get((job.item.metric, json.dumps(job.item.segment, sort_keys=True)))
        if done is None:
            continue
        for item in [job.item, *job.covers]:
            state.record(key(item), done.run_id, done.status, _summary(done, config.report_url))
        covered = f"covered by the run for {job.item.metric} {seg(job.item.segment)}"
        skipped += [Skipped.of(i, covered, done.run_id) for i in job.covers]
    stales, loads = [], []
    for source in sources:
        previous = state.load(source.name)
        found = stale(source.name, source.last, source.end, previous, now.date(), source.end_has_rows)
        loads.append(seen(source.name, source.last, previous, now.date()))
        if found is not None:
            stales.append(found)
            log("stale data", logging.WARNING, data=found.source, reason=found.reason)
    title = _title(config, scanned, now)
    told = Told(alerts, changes, stales, loads, investigated, skipped)
    notifications, announced, notes = notify(
        config, told, state, key, urls, title, notifier, redact, backoff_s
    )
    state.save_episodes([_announce(c.episode, announced) for c in changes])
    for load in loads:
        state.save_load(load)
    digest = Digest(
        scanned=scanned,
        investigated=investigated,
        skipped=skipped,
        notifications=notifications,
        stale=stales,
        alerts=notes,
    )
    folder = write_digest(digest, _folder(settings.runs_dir, now), title, json_path)
    log("digest written", folder=str(folder), exit_code=_exit_code(digest))
    return Outcome(digest, folder, _exit_code(digest), title)


def _announce(episode: Episode, announced: dict[tuple[str, str], float]) -> Episode:
    told = announced.get(episode.series)
    return episode if told is None else episode.model_copy(update={"announced": told})


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
    """An item's anomaly key without episodes (its own window end): for callers without state."""
    assert item.window_end is not None  # flagged items were scanned, so they have windows
    return anomaly_key(item.metric, item.segment, item.window_end)


def _exit_code(d: Digest) -> int:
    errors = [s for s in d.scanned if s.error]
    if d.scanned and len(errors) == len(d.scanned):
        return COULD_NOT_RUN
    if errors or d.stale or any(i.status == "failed" for i in d.investigated):
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
