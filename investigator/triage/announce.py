"""What a morning tells: the alerts whose episode is new or worse, the announced episodes that
ended, the sources whose data did not arrive; one message, and what the state remembers of it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from investigator.triage.alerts import Alert, AlertNote
from investigator.triage.config import TriageConfig
from investigator.triage.episodes import Change, series_key
from investigator.triage.freshness import Load, Stale
from investigator.triage.message import compose
from investigator.triage.notify import Notification, Notifier, deliver
from investigator.triage.runs import Investigated, Skipped
from investigator.triage.scan import ScanItem
from investigator.triage.secrets import Redactor
from investigator.triage.state import TriageState

Key = Callable[[ScanItem], tuple[str, str, str]]
logger = logging.getLogger("investigator.triage")


def log(event: str, level: int = logging.INFO, **fields: object) -> None:
    logger.log(level, event, extra={"fields": fields})


@dataclass
class Told:
    """What this morning may tell: its alerts, episode changes, stale sources and runs."""

    alerts: list[Alert]
    changes: list[Change]
    stales: list[Stale]
    loads: list[Load]
    investigated: list[Investigated]
    skipped: list[Skipped]


def notify(
    config: TriageConfig,
    morning: Told,
    state: TriageState,
    key: Key,
    urls: list[str],
    title: str,
    notifier: Notifier,
    redact: Redactor,
    backoff_s: float,
) -> tuple[list[Notification], dict[tuple[str, str], float], list[AlertNote]]:
    """One message about what nobody was told yet: each alert whose episode is new (or whose
    finding was not sent), or worsened; each announced episode that ended; each source whose data
    did not arrive (once per last day). An expected move is not told unless `notify_expected`.
    Returns the deliveries, the |score| each announced series was told at, and each alert's note."""
    alerts, changes, stales, loads = morning.alerts, morning.changes, morning.stales, morning.loads
    investigated, skipped = morning.investigated, morning.skipped
    events = {c.episode.series: c.event for c in changes if c.item is not None}
    told: list[tuple[Alert, str, str]] = []
    found_keys, fresh_keys = [], []
    notes: list[AlertNote] = []
    for alert in alerts:
        head = alert.head
        if head.expected and not config.notify_expected:
            notes.append(AlertNote.of(alert, "expected"))
            continue
        seen_ = state.seen(key(head))
        worse = events.get(series_key(head.metric, head.segment)) == "worse"
        if (seen_ is None or not seen_.notified_at) and _told_before(alert.members, events, state, key):
            # a new head over segments already announced (the total catching up with one station's
            # move): the same event, remembered as told without a word
            state.mark_notified([key(head)])
            notes.append(AlertNote.of(alert, "continues"))
            continue
        if seen_ is None:
            fresh_keys.append(key(head))
        elif seen_.summary and not seen_.notified_at:
            found_keys.append(key(head))
        elif not worse:
            notes.append(AlertNote.of(alert, "continues"))
            continue
        notes.append(AlertNote.of(alert, "worse" if worse else "new"))
        reason = next((s.reason for s in skipped if (s.metric, s.segment) == (head.metric, head.segment)), "")
        finding = (seen_.summary if seen_ else None) or f"not investigated ({reason or 'budget'})"
        told.append((alert, "worse" if worse else "new", finding))
        for member in alert.members:  # named on the head's line: told too
            mine = state.seen(key(member))
            if mine is None:
                fresh_keys.append(key(member))
            elif mine.summary and not mine.notified_at:
                found_keys.append(key(member))
    ended = [c.episode for c in changes if c.event == "ended" and c.episode.announced is not None]
    notes += [AlertNote(metric=e.metric, segment=e.segment, event="ended") for e in ended]
    unsaid = {x.source for x in loads if not x.notified}
    loud = [s for s in stales if s.source in unsaid]
    if not (told or ended or loud) or not urls:
        return [], {}, notes
    failed = sum(1 for i in investigated if i.status == "failed")
    body = compose(told, ended, loud, len(investigated), failed)
    sent = deliver(urls, title, redact(body), notifier, redact, backoff_s=backoff_s)
    for n in sent:
        event = "notified" if n.ok else "notification failed"
        level = logging.INFO if n.ok else logging.ERROR
        log(event, level, target=n.target, error=n.error, attempts=n.attempts)
    if not any(n.ok for n in sent):
        return sent, {}, notes
    state.mark_notified(found_keys)
    state.note(fresh_keys)  # a finding's row is there already
    for load in loads:
        if any(s.source == load.source for s in loud):
            load.notified = True
    announced = {series_key(a.head.metric, a.head.segment): abs(_z(a.head)) for a, _, _ in told}
    return sent, announced, notes


def _told_before(
    members: list[ScanItem], events: Mapping[tuple[str, str], str], state: TriageState, key: Key
) -> bool:
    """Whether any of the alert's segments is in an episode an earlier morning announced."""
    return any(
        events.get(series_key(m.metric, m.segment)) in ("continues", "worse")
        and state.seen(key(m)) is not None
        for m in members
    )


def _z(item: ScanItem) -> float:
    return item.score if item.score is not None else (item.change_pct or 0.0) / 0.25 * 3.0


__all__ = ["Key", "Told", "notify"]
