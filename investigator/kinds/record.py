"""A new record: the value is the lowest (or highest) of a long history of windows, a record no
recent window set (`analysis/records.py`). Dashboards call it out and a person asks why, so a
record is never "no root cause to find": the breakdown (segments, mix and rate, broad-based)
explains the move into it even when its size was ordinary, and the headline says it is a record.

It names no cause of its own: a record is why the move needs explaining, not what moved it.
"""

from __future__ import annotations

from investigator.kinds.base import Kind
from investigator.run.evidence import Evidence


def notable(evidence: Evidence) -> bool:
    """The move set a record the recent history did not: it is to be explained."""
    move = evidence.movement
    return move is not None and move.level_record > 0 and move.change != 0


def note(evidence: Evidence) -> str:
    """The headline's sentence: "It is the lowest value in 97 windows." (empty when no record)."""
    move = evidence.movement
    if move is None or not notable(evidence):
        return ""
    way = "lowest" if move.change < 0 else "highest"
    return f" It is the {way} value in {move.level_record + 1} windows of this length."


KIND = Kind(name="record", needs_dimensions=True)
