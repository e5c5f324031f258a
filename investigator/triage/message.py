"""The morning message's text: one line per alert (its grouped segments on it), the episodes that
ended, the sources whose data did not arrive. Data is shown, never a mention or a link."""

from __future__ import annotations

from investigator.fmt import chat, pct, seg
from investigator.triage.alerts import Alert
from investigator.triage.episodes import Episode
from investigator.triage.freshness import Stale
from investigator.triage.scan import ScanItem

SHOWN = 5  # grouped segments named on an alert's line; the rest are counted


def _z(item: ScanItem) -> str:
    return "n/a" if item.score is None else f"{item.score:+.1f}"


def alert_line(alert: Alert, kind: str, finding: str) -> str:
    """`- **revenue** (whole metric): -41.0% (z -9.1) — finding; also station=A -40%, ... (+3 more)`."""
    head = alert.head
    what = f"**{chat(head.metric)}** {chat(seg(head.segment))}"
    worse = "worse: " if kind == "worse" else ""
    note = f" [{chat(head.note)}]" if head.note else ""
    line = f"- {worse}{what}: {pct(head.change_pct)} (z {_z(head)}){note} — {chat(finding)}"
    if alert.members:
        named = ", ".join(f"{chat(seg(m.segment))} {pct(m.change_pct)}" for m in alert.members[:SHOWN])
        more = f" (+{len(alert.members) - SHOWN} more)" if len(alert.members) > SHOWN else ""
        line += f"; also {named}{more}"
    return line


def compose(
    told: list[tuple[Alert, str, str]],
    ended: list[Episode],
    stale: list[Stale],
    investigated: int,
    failed: int,
) -> str:
    """The message body: a headline of counts, then the lines."""
    runs = f"{investigated} investigated this run" + (f", {failed} failed" if failed else "")
    head = [f"{len(told)} alerts, {runs}"]
    if stale:
        head.append(f"{len(stale)} sources with stale data")
    if ended:
        head.append(f"{len(ended)} ended")
    lines = [", ".join(head), ""]
    lines += [f"- data did not arrive: {chat(s.source)}: {chat(s.reason)}" for s in stale]
    lines += [alert_line(a, kind, finding) for a, kind, finding in told]
    lines += [
        f"- ended: **{chat(e.metric)}** {chat(seg(e.segment))} (from {e.first_end} to {e.last_end})"
        for e in ended
    ]
    return "\n".join(lines)


__all__ = ["alert_line", "compose"]
