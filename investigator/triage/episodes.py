"""Episodes: one move followed across consecutive mornings, so it is announced once.

A 7-day window run daily holds a one-day drop for seven mornings, and a week-long move flags a
one-day window seven mornings running: both are one episode. An episode of a series (metric,
segment) opens on the morning it is flagged, stays open while its score keeps the same sign and at
least half the threshold (a move that hovers around the bar is not a new episode each time it
crosses it), and ends on the first morning it does not (or when the job has not seen it for longer
than the window). It is announced when it opens, again only when its score doubles (it worsened),
and once when it ends if it was announced.
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from investigator.triage.scan import ScanItem

WORSE = 2.0  # an open episode is announced again when its |score| reaches this multiple of the last announced
Event = Literal["new", "worse", "continues", "ended"]


class Episode(BaseModel):
    """One series' move across mornings, as the state keeps it."""

    metric: str
    segment: dict[str, str] = Field(default_factory=dict)
    sign: int = Field(description="+1 a rise, -1 a fall")
    first_end: date = Field(description="the window end of the morning it opened: its key")
    last_end: date = Field(description="the last window end it was seen on")
    peak: float = Field(0.0, description="the largest |score| so far")
    announced: float | None = Field(None, description="|score| when last announced; None: never")
    open: bool = True

    @property
    def series(self) -> tuple[str, str]:
        return series_key(self.metric, self.segment)


class Change(BaseModel):
    """What this morning did to one series' episode."""

    event: Event
    episode: Episode
    item: ScanItem | None = None


def series_key(metric: str, segment: dict[str, str]) -> tuple[str, str]:
    return metric, json.dumps(segment, sort_keys=True)


def follow(
    open_episodes: list[Episode], scanned: list[ScanItem], threshold: float, window_days: int
) -> list[Change]:
    """This morning's changes: each flagged series' episode (new, worse or continuing) and each
    open episode that ended. Pure: the caller stores the episodes it returns."""
    by_series = {e.series: e for e in open_episodes if e.open}
    gap = timedelta(days=max(window_days, 1) + 1)  # mornings the job may miss inside one episode
    out: list[Change] = []
    seen: set[tuple[str, str]] = set()
    for item in scanned:
        if item.error or item.window_end is None:
            continue
        key = series_key(item.metric, item.segment)
        seen.add(key)
        ep = by_series.get(key)
        z = item.score if item.score is not None else (item.change_pct or 0.0) / 0.25 * threshold
        sign = 1 if z > 0 else -1
        alive = ep is not None and ep.sign == sign and item.window_end - ep.last_end <= gap
        if ep is not None and item.window_end < ep.last_end:
            continue  # an older morning re-run (a backfill): leave today's episode alone
        if item.flagged:
            if alive and ep is not None:
                worse = ep.announced is not None and abs(z) >= WORSE * ep.announced
                moved = ep.model_copy(update={"last_end": item.window_end, "peak": max(ep.peak, abs(z))})
                out.append(Change(event="worse" if worse else "continues", episode=moved, item=item))
                continue
            if ep is not None:
                out.append(Change(event="ended", episode=ep.model_copy(update={"open": False})))
            fresh = Episode(metric=item.metric, segment=item.segment, sign=sign, first_end=item.window_end,
                            last_end=item.window_end, peak=abs(z))  # fmt: skip
            out.append(Change(event="new", episode=fresh, item=item))
        elif ep is not None:
            if alive and abs(z) >= threshold / 2 and item.note is None:
                moved = ep.model_copy(update={"last_end": item.window_end})
                out.append(Change(event="continues", episode=moved, item=item))
            elif item.window_end > ep.last_end:
                out.append(Change(event="ended", episode=ep.model_copy(update={"open": False}), item=item))
    return out


__all__ = ["Change", "Episode", "follow", "series_key"]
