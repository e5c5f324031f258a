"""The reversal of a steady run: the first fall after years of rises (or the reverse). A person
reads it as news whatever its size, and "small" or "within normal variation" would hide it: the
breakdown explains it, and the headline names the run it ended.

It names no cause of its own: like a record, it is why the move needs explaining.
"""

from __future__ import annotations

from investigator.kinds.base import Kind
from investigator.run.evidence import Evidence

STEADY = 5  # windows in a row that moved one way: a run a reversal ends


def notable(evidence: Evidence) -> bool:
    move = evidence.movement
    return move is not None and move.reverses >= STEADY and move.change != 0


def note(evidence: Evidence) -> str:
    """The headline's sentence: " It is the first fall after 7 rises in a row." (empty: none)."""
    move = evidence.movement
    if move is None or not notable(evidence):
        return ""
    now, then = ("fall", "rises") if move.change < 0 else ("rise", "falls")
    return f" It is the first {now} after {move.reverses} {then} in a row."


KIND = Kind(name="reversal", notable=notable, note=note)
