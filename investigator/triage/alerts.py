"""One alert per event: a metric's flagged series grouped into what one message line says.

A storm moves the total and most of its segments alike: that is one alert, headed by the total
(the run investigates the total, and its dimensions cover the segments), the segments listed
under it. A segment is an alert of its own only when it moved unlike its total: against the
total's direction, or while the total did not move at all (then the segments that moved together
are one alert headed by the most severe). At most two alerts per metric per morning.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from investigator.triage.scan import ScanItem, ranked


class Alert(BaseModel):
    """What one message line is about: its `head` (investigated) and the series grouped under it."""

    head: ScanItem
    members: list[ScanItem] = Field(default_factory=list)

    @property
    def metric(self) -> str:
        return self.head.metric


class AlertNote(BaseModel):
    """An alert as the digest keeps it: what happened to it this morning (`new` and `worse` are
    told; `continues` was told before; `expected` is not told; `ended` is told once)."""

    metric: str
    segment: dict[str, str] = Field(default_factory=dict)
    event: Literal["new", "worse", "continues", "expected", "ended"]
    change_pct: float | None = None
    score: float | None = None
    members: list[dict[str, str]] = Field(default_factory=list, description="segments grouped under it")

    @classmethod
    def of(cls, alert: Alert, event: Literal["new", "worse", "continues", "expected"]) -> AlertNote:
        head = alert.head
        return cls(metric=head.metric, segment=head.segment, event=event, change_pct=head.change_pct,
                   score=head.score, members=[m.segment for m in alert.members])  # fmt: skip


def _sign(item: ScanItem) -> int:
    value = item.score if item.score is not None else item.change_pct
    return 1 if (value or 0.0) > 0 else -1


def group(scanned: list[ScanItem], threshold: float = 3.0) -> list[Alert]:
    """The morning's alerts, most severe head first: per metric, the flagged total with its
    segments that moved its way, and the segments that moved the other way (or all flagged
    segments when the total is not flagged) as one alert headed by the most severe of them."""
    flagged = ranked(scanned, threshold)
    totals = {i.metric: i for i in scanned if not i.segment and not i.error}
    alerts: list[Alert] = []
    for metric in dict.fromkeys(i.metric for i in flagged):
        mine = [i for i in flagged if i.metric == metric]
        total = totals.get(metric)
        if total is not None and total.flagged:
            alike = [i for i in mine if i.segment and _sign(i) == _sign(total)]
            unlike = [i for i in mine if i.segment and _sign(i) != _sign(total)]
            alerts.append(Alert(head=total, members=alike))
        else:
            unlike = mine
        for sign in (1, -1):
            part = [i for i in unlike if _sign(i) == sign]
            if part:
                alerts.append(Alert(head=part[0], members=part[1:]))
    order = {id(i): n for n, i in enumerate(flagged)}
    return sorted(alerts, key=lambda a: order[id(a.head)])


__all__ = ["Alert", "AlertNote", "group"]
