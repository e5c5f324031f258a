"""The LLM planner's conclusion, in the host's words.

A model's sentences are not evidence: a scripted model ended `concluded`, confidence high, with
"revenue ROSE 40% ... the host verified it ... caused by DE" while the data fell 15.6% because of
US, and that text went to the reports, the MCP answer and memory. So when the model concludes, the
host writes the headline, each cause's evidence and the confidence from the run's evidence, as the
offline planner does, for the causes the model named (the loop's check then recomputes each one).
The model's own words survive only as its commentary, marked as such, in the step's rationale.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.kinds.common import sized
from investigator.planners.offline import OfflinePlanner, proposals
from investigator.run.context import Context
from investigator.run.decision import Decision, DecisionType
from investigator.run.verdict import conclusion_text, confidence

__all__ = ["COMMENTARY", "UNLISTED", "host_conclusion"]

COMMENTARY = "Model's commentary (its own words, not checked by the host)"
UNLISTED = "named by the model; the host's analysis does not list it (its share is recomputed by the host)"
MAX_COMMENTARY = 600  # characters of the model's words kept in the rationale


def host_conclusion(model: Decision, context: Context) -> Decision:
    """`model`'s CONCLUDE rewritten by the host: each cause the model named carries the host's
    numbers and words where the evidence lists it (else only its claimed share, which the check
    recomputes, and a host sentence that says so); the headline and the confidence are the host's
    for those causes; the facts proposed are the host's. With no cause named, the host's own."""
    if model.type != DecisionType.CONCLUDE:
        return model
    host = OfflinePlanner().conclude(context)
    listed = {_key(c): c for c in host.root_causes}
    causes = [_in_host_words(c, listed) for c in model.root_causes] or host.root_causes
    words = " ".join(w for w in (model.conclusion, model.rationale) if w and w.strip())
    return model.model_copy(
        update={
            "conclusion": conclusion_text(causes, context.evidence, context.spec, context.facts),
            "confidence": confidence(causes, context.evidence),
            "root_causes": causes,
            "proposed_facts": proposals(causes, context.spec),
            "rationale": f"{COMMENTARY}: {_bounded(words)}" if words else "The model concluded.",
        }
    )


def _in_host_words(claimed: RootCause, listed: dict[tuple[object, ...], RootCause]) -> RootCause:
    """The host's cause for the same kind and segment, or the claim stripped of the model's text
    and of any number but its share (which the check recomputes within tolerance)."""
    ours = listed.get(_key(claimed))
    if ours is not None:
        return ours.model_copy(update={"verified": None})
    return sized(
        RootCause(
            kind=claimed.kind,
            segment=dict(claimed.segment),
            contribution=claimed.contribution,
            detail=claimed.detail,
            driver=claimed.driver,
            evidence=UNLISTED,
        )
    )


def _key(c: RootCause) -> tuple[object, ...]:
    return c.kind, tuple(sorted(c.segment.items())), c.detail, c.driver


def _bounded(text: str) -> str:
    """The model's words on one line, cut at `MAX_COMMENTARY` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_COMMENTARY else flat[: MAX_COMMENTARY - 1] + "…"
