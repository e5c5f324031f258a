"""What a finished run leaves in memory: atomic memories worth recalling, and nothing trivial."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from investigator.fmt import seg
from investigator.memory.models import Direction, Lead, NewMemory

if TYPE_CHECKING:
    from investigator.report.model import Report
    from investigator.run.state import RunState

_DATES = re.compile(r"\d{4}-\d{2}-\d{2}(?:\.\.\d{4}-\d{2}-\d{2})?|\b\d{8}-\d{6}-[0-9a-f]+\b")
_NUMBER = re.compile(r"\d")


def nontrivial(m: NewMemory) -> bool:
    """A memory names a cause, or carries a number other than a date or a run id."""
    return bool(m.kind and m.kind != "no_change") or bool(_NUMBER.search(_DATES.sub("", m.text)))


def direction_of(change: float | None) -> Direction | None:
    if change is None or not math.isfinite(change) or change == 0:
        return None
    return "down" if change < 0 else "up"


def leads_of(state: RunState) -> list[Lead]:
    """What a run found, strongest first: its causes the data did not refute, each with the way
    it moved (the cause's change, else the metric's)."""
    if state.conclusion is None:
        return []
    move = state.evidence.movement
    overall = direction_of(move.change) if move is not None else None
    return [
        Lead(kind=c.kind, segment=c.segment, direction=direction_of(c.change) or overall)
        for c in state.conclusion.root_causes
        if c.verified is not False and c.kind != "no_change"
    ]


def memories_of(state: RunState, report: Report) -> list[NewMemory]:
    """What the run found: its conclusion and each verified cause with its numbers. Not what it
    was told (the approved facts live in the ledger). Only a concluded run: a partial one stopped
    before its evidence was complete."""
    if state.conclusion is None or state.status != "concluded":
        return []
    s = state.spec
    where = f"{s.metric} {s.current.start}..{s.current.end} vs {s.baseline.start}..{s.baseline.end}"
    base = {"run_id": state.run_id, "metric": s.metric, "source": state.memory.source,
            "source_alias": state.memory.source_alias}  # fmt: skip
    move = state.evidence.movement
    overall = direction_of(move.change) if move is not None else None
    out = [
        NewMemory(type="observation", text=report.conclusion, direction=overall, **base)
    ]  # it names metric and windows
    for c in report.root_causes:
        no_number = [x for x in (c.contribution, c.change) if x is not None and not math.isfinite(x)]
        if c.verified is not True or no_number:
            continue  # the data did not bear it out, or never checked it, or it is no number
        share = f", {c.contribution:.0%} of the change" if c.contribution is not None else ""
        change = f" ({c.change:+,.0f})" if c.change is not None else ""
        label = c.kind + (f" ({c.detail})" if c.detail else "")
        out.append(
            NewMemory(
                type="observation",
                text=f"{where}: {label} in {seg(c.segment)}{share}{change}; {c.evidence}",
                kind=c.kind,
                segment=c.segment,
                direction=direction_of(c.change) or overall,
                **base,
            )
        )
    return [m for m in out if nontrivial(m)]
