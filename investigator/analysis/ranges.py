"""The periods analysts write: explicit ranges of days (`2026-03-01..2026-03-07`) and trailing
average baselines (`avg4`), next to the named baselines (`previous`, `wow`, ...).

Only the form is checked here; whether a range is whole periods of the data, inside it, and apart
from the window is for the window planner (`sources.windows`). Pure functions over text and dates.
"""

from __future__ import annotations

import re
from datetime import date

from .grain import BASELINES, WindowError

AVG_MIN, AVG_MAX = 2, 52
RANGE_EXAMPLE = "2026-03-01..2026-03-07"
BASELINE_EXAMPLE = "2026-02-01..2026-02-07"
_AVG = re.compile(r"^\s*avg\s*(\d+)\s*$", re.IGNORECASE)


def _shown(text: str) -> str:
    """The value as a message quotes it: cut short (a config value can be megabytes)."""
    text = text.strip()
    return repr(text if len(text) <= 60 else text[:40] + "...")


def is_range(text: str) -> bool:
    """Whether `text` is written as a range (`a..b`), well-formed or not."""
    return ".." in text


def parse_range(text: str, what: str, example: str = RANGE_EXAMPLE) -> tuple[date, date]:
    """`2026-03-01..2026-03-07` -> its first and last day, both included. `what` names the option
    in messages (`--window`, `baseline`)."""
    left, _, right = text.strip().partition("..")
    try:
        start, end = date.fromisoformat(left.strip()), date.fromisoformat(right.strip())
    except ValueError:
        raise WindowError(
            f"{what} {_shown(text)} is not a range of days: write the first and last day, e.g. "
            f"{what} {example}"
        ) from None
    if end < start:
        raise WindowError(
            f"{what} {_shown(text)} ends before it starts: write the earlier day first, e.g. "
            f"{what} {end}..{start}"
        )
    return start, end


def range_text(start: date, end: date) -> str:
    return f"{start.isoformat()}..{end.isoformat()}"


def avg_count(text: str) -> int | None:
    """N of a trailing average baseline `avgN`; None for any other baseline."""
    m = _AVG.match(text or "")
    return int(m.group(1)) if m else None


def check_baseline(text: str, flag: str = "--") -> str:
    """The baseline in its one written form: `previous`, `wow`, `mom`, `qoq`, `yoy`, `avgN` (N from
    2 to 52) or a range of days; a `WindowError` that says what to write instead."""
    what = f"{flag}baseline"
    value = (text or "").strip()
    if value.lower() in BASELINES:
        return value.lower()
    n = avg_count(value)
    if n is not None:
        if not AVG_MIN <= n <= AVG_MAX:
            raise WindowError(
                f"{what} {_shown(value)} averages {n} windows: avgN takes N from {AVG_MIN} to {AVG_MAX}, "
                f"e.g. {what} avg4 (the mean of the 4 windows before)"
            )
        return f"avg{n}"
    if is_range(value):
        return range_text(*parse_range(value, what, BASELINE_EXAMPLE))
    raise WindowError(
        f"{what} {_shown(value)} is not understood: write one of {', '.join(BASELINES)}, avgN (e.g. "
        f"avg4, the mean of the 4 windows before) or a range of days (e.g. {BASELINE_EXAMPLE})"
    )
