"""Loop control rules: every stop rule (iterations, tokens, stalls), error streaks, early
conclusions and forced moves, in this one place.

Each function reads the state and returns a value; the loop decides what to do with it.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from itertools import pairwise

from pydantic import BaseModel

from investigator.config import RunSettings
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Hypothesis, Status, Update, current, next_pending, with_status
from investigator.run.state import RunState

NEAR_IDENTICAL = 0.9


class Stop(BaseModel):
    """End the run now with a partial conclusion."""

    reason: str


class ForcedPivot(BaseModel):
    """The run is stuck: move to the next hypothesis instead of asking the planner."""

    decision: Decision
    reason: str


def limits(state: RunState, settings: RunSettings) -> Stop | ForcedPivot | None:
    """What the stop rules say before the next step: stop, force a pivot, or carry on (None)."""
    if state.iteration + 1 >= settings.max_iterations:  # the last iteration is kept for the conclusion
        return Stop(reason=f"reached max_iterations ({settings.max_iterations})")
    if settings.max_tokens_per_run and state.tokens_used >= settings.max_tokens_per_run:
        return Stop(reason=f"used the token budget ({settings.max_tokens_per_run})")
    stall = stall_reason(state, settings)
    if stall is None:
        return None
    pivot = forced_pivot(state.hypotheses, stall)
    if pivot is None:
        return Stop(reason=f"stalled ({stall}) with no hypothesis left")
    return ForcedPivot(decision=pivot, reason=stall)


def tokens_left(state: RunState, settings: RunSettings) -> int | None:
    """What the token budget still allows this run (None: no budget)."""
    if not settings.max_tokens_per_run:
        return None
    return max(settings.max_tokens_per_run - state.tokens_used, 0)


def stall_reason(state: RunState, settings: RunSettings) -> str | None:
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


def conclusion_refusal(state: RunState, settings: RunSettings) -> str | None:
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
