"""Where a run meets memory with the whole of it in hand: what it found (`leads_of`), recall asked
again with that (`recognise`, for the report's "Seen before") and what a finished run leaves in
memory (`memories_of`, kept by `remember`). Memory itself knows neither the run nor the report: it
sits below both and is handed values.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from investigator.fmt import seg
from investigator.memory import keep, recall
from investigator.memory.extract import direction_of, nontrivial
from investigator.memory.home import DB
from investigator.memory.models import Lead, NewMemory

if TYPE_CHECKING:
    from investigator.config import Settings
    from investigator.memory.embed import Embedder
    from investigator.report.model import Report
    from investigator.run.state import RunState

__all__ = ["leads_of", "memories_of", "recognise", "remember"]


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


def recognise(state: RunState, settings: Settings, embedder: Embedder | None = None) -> RunState:
    """The concluded run with recall asked again, with what it found (`leads_of`): a past memory
    of the same drop comes first, then what was recalled at its start (what its planner saw).
    For the report's "Seen before"; a run that found nothing, or has no memories, is unchanged."""
    leads = leads_of(state)
    m = state.memory
    if not leads or m.source is None or not (settings.home / DB).exists():
        return state
    again = recall(settings, state.spec, embedder, m.source, m.source_alias, leads)
    first = {(r.run_id, r.text) for r in again.recalled}
    earlier = [r for r in m.recalled if (r.run_id, r.text) not in first]
    update = {
        "recalled": again.recalled + earlier,
        "warnings": list(dict.fromkeys(m.warnings + again.warnings)),
    }
    return state.model_copy(update={"memory": m.model_copy(update=update)})


def remember(
    state: RunState, report: Report, settings: Settings, embedder: Embedder | None = None
) -> list[str]:
    """Store a finished run's memories and its proposed facts; returns warnings (never raises)."""
    try:
        proposals = [
            p.model_copy(update={"run_id": state.run_id})
            for p in (state.conclusion.proposed_facts if state.conclusion is not None else [])
        ]
        memories = memories_of(state, report)
    except Exception as e:
        return [f"memory: this run was not remembered ({type(e).__name__}: {e})"]
    return keep(settings, memories, proposals, embedder)
