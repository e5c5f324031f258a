"""What is worth remembering: a memory that names a cause or carries a number, and the way a change
went. (Which memories a finished run leaves is `investigator.remembering.memories_of`.)"""

from __future__ import annotations

import math
import re

from investigator.memory.models import Direction, NewMemory

_DATES = re.compile(r"\d{4}-\d{2}-\d{2}(?:\.\.\d{4}-\d{2}-\d{2})?|\b\d{8}-\d{6}-[0-9a-f]+\b")
_NUMBER = re.compile(r"\d")


def nontrivial(m: NewMemory) -> bool:
    """A memory names a cause, or carries a number other than a date or a run id."""
    return bool(m.kind and m.kind != "no_change") or bool(_NUMBER.search(_DATES.sub("", m.text)))


def direction_of(change: float | None) -> Direction | None:
    if change is None or not math.isfinite(change) or change == 0:
        return None
    return "down" if change < 0 else "up"
