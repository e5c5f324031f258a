"""The conclusion the evidence supports on its own: what a run that stops early (a limit, a
planner that will not conclude, causes that fail the host's check) reports instead of a guess."""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.run.decision import Decision, DecisionType
from investigator.run.state import RunState
from investigator.run.verdict import conclusion_text, confidence, root_causes, with_facts


def evidence_decision(state: RunState, causes: list[RootCause] | None = None) -> Decision:
    """The offline verdict on the evidence gathered so far (`causes` overrides its causes)."""
    facts = state.memory.facts  # approved by a person: a known late segment reads as late data
    causes = (
        with_facts(root_causes(state.evidence, state.spec), facts, state.spec, state.evidence)
        if causes is None
        else causes
    )
    return Decision(
        type=DecisionType.CONCLUDE,
        rationale="",
        conclusion=conclusion_text(causes, state.evidence, state.spec, facts),
        confidence="low" if not causes else confidence(causes, state.evidence),
        root_causes=causes,
    )
