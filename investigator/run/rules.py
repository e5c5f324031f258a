"""Loop control rules: stalls, error streaks, early conclusions and forced moves.

Each function reads the state and returns a value; the loop decides what to do with it.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from itertools import pairwise

from investigator.config import Settings
from investigator.run.compress import Update
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Hypothesis, Status, current, next_pending, with_status
from investigator.run.state import RunState

NEAR_IDENTICAL = 0.9


def stall_reason(state: RunState, settings: Settings) -> str | None:
    """Why the run is stuck, or None. Stuck = no hypothesis moved lately, or it keeps repeating."""
    if state.consecutive_errors >= settings.max_consecutive_errors:
        return f"{state.consecutive_errors} code errors in a row"
    idle = state.iteration - state.last_progress
    if idle >= settings.stall_threshold:
        return f"no hypothesis progress in {idle} steps"
    last = [f.summary for f in state.findings[-3:] if f.iteration > 0]
    if len(last) == 3 and all(
        SequenceMatcher(None, a, b).ratio() >= NEAR_IDENTICAL for a, b in pairwise(last)
    ):
        return "the last 3 findings are near-identical"
    return None


def forced_pivot(hypotheses: list[Hypothesis], reason: str) -> Decision | None:
    """A PIVOT to the next pending hypothesis, or None when there is nothing left to try."""
    nxt = next_pending(hypotheses)
    if nxt is None:
        return None
    cur = current(hypotheses)
    left = f" and leaving {cur.id}" if cur else ""
    return Decision(
        type=DecisionType.PIVOT,
        rationale=f"Forced pivot: {reason}{left}; moving to {nxt.id}.",
        hypothesis_id=nxt.id,
    )


def pivot_hypotheses(hypotheses: list[Hypothesis], target: str | None, reason: str) -> list[Hypothesis]:
    """The current hypothesis, if unresolved, is abandoned (RULED_OUT); the target becomes current."""
    out = []
    for h in hypotheses:
        if h.status == Status.INVESTIGATING and h.id != target:
            h = h.model_copy(update={"status": Status.RULED_OUT, "evidence": f"abandoned: {reason}"})
        elif h.id == target and h.status == Status.PENDING:
            h = h.model_copy(update={"status": Status.INVESTIGATING})
        out.append(h)
    return out


def conclusion_refusal(state: RunState, settings: Settings) -> str | None:
    done = state.iteration
    if done < settings.min_iterations_before_conclude:
        return (
            f"Conclusion refused: only {done} step(s) done, at least "
            f"{settings.min_iterations_before_conclude} are required before concluding."
        )
    return None


def apply_updates(hypotheses: list[Hypothesis], updates: list[Update]) -> list[Hypothesis]:
    """Apply status updates, each naming its hypothesis by id or by kind."""
    for u in updates:
        target = next(
            (h for h in hypotheses if h.id == u.hypothesis_id or (u.kind and h.kind == u.kind)), None
        )
        if target is not None:
            hypotheses = with_status(hypotheses, target.id, u.status, u.evidence)
    return hypotheses


def reorder(hypotheses: list[Hypothesis], ranked: list[str] | None) -> list[Hypothesis]:
    """Put the ranked ids first, in that order; unknown ids are ignored, the rest keep their order."""
    if not ranked:
        return hypotheses
    pos = {hid: i for i, hid in enumerate(ranked)}
    return sorted(hypotheses, key=lambda h: pos.get(h.id, len(pos)))
