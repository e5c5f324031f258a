"""Stale and missing data: a load that did not arrive must be said, never re-scanned in silence.

Two signs, per source: the morning's window asks for a day the data has no rows for (`end:`,
`end: yesterday`, `--end`), or the data's last day has not advanced since an earlier morning's
run saw it. Either is a `Stale` line in the digest and the message (announced once per last day).
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel


class Load(BaseModel):
    """A source's last day as the job last saw it, and the morning it first saw that day."""

    source: str
    last: date
    first_seen: date
    notified: bool = False


class Stale(BaseModel):
    """A source whose data did not arrive: what to tell the people who read the alerts."""

    source: str
    last: date
    reason: str


def stale(
    source: str,
    last: date,
    end: date | None,
    previous: Load | None,
    today: date,
    end_has_rows: bool = True,
) -> Stale | None:
    """Why the source's data looks stale this morning, or None. `end` is the day the window was
    asked to end on (None: the data's last day) and `end_has_rows` whether the data has rows on it,
    `previous` the source's load as an earlier run saw it, `today` the run's day."""
    if end is not None and (end > last or not end_has_rows):
        return Stale(source=source, last=last, reason=f"no rows for {end}: the data's last day is {last}")
    if previous is not None and previous.last == last and previous.first_seen < today:
        return Stale(
            source=source,
            last=last,
            reason=f"the data has not advanced since the run of {previous.first_seen}: "
            f"its last day is still {last}",
        )
    return None


def seen(source: str, last: date, previous: Load | None, today: date) -> Load:
    """The load to remember after this morning: the same one while the last day stands still."""
    if previous is not None and previous.last == last:
        return previous
    return Load(source=source, last=last, first_seen=today)


__all__ = ["Load", "Stale", "seen", "stale"]
