"""The planner's output: one pydantic `Decision` per iteration, whichever planner made it."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from investigator.analysis.causes import CauseKind, RootCause
from investigator.memory.models import FactProposal

__all__ = ["CauseKind", "Confidence", "Decision", "DecisionType", "RootCause"]

Confidence = Literal["high", "medium", "low"]


class DecisionType(StrEnum):
    ANALYZE = "ANALYZE"
    DRILL_DOWN = "DRILL_DOWN"
    PIVOT = "PIVOT"
    CONCLUDE = "CONCLUDE"


class Decision(BaseModel):
    """What to do next, and why."""

    type: DecisionType
    rationale: str
    hypothesis_id: str | None = None
    code: str | None = Field(None, description="Python to run in the kernel (ANALYZE/DRILL_DOWN)")
    conclusion: str | None = None
    confidence: Confidence | None = None
    root_causes: list[RootCause] = Field(default_factory=list)
    blockers: list[str] = Field(
        default_factory=list, description="what needs a human (missing data, ill-posed)"
    )
    reranked: list[str] | None = Field(None, description="hypothesis ids, most promising first")
    proposed_facts: list[FactProposal] = Field(
        default_factory=list,
        description="CONCLUDE: facts for a person to review; pending until approved, never used before",
    )
    fallback: str | None = Field(
        None, description="why the offline planner chose this step in place of the model (LLM planner)"
    )
    answered_by: Literal["model", "fallback"] | None = Field(
        None, description="LLM planner: the model's answer decided this step, or the offline fallback did"
    )
    reasks: int = Field(0, ge=0, description="LLM planner: re-asks the model's answer needed to validate")

    @model_validator(mode="after")
    def _complete(self) -> Decision:
        if self.type in (DecisionType.ANALYZE, DecisionType.DRILL_DOWN) and not (self.code or "").strip():
            raise ValueError(f"{self.type} needs code to run")
        if self.type == DecisionType.CONCLUDE and not (self.conclusion or "").strip():
            raise ValueError("CONCLUDE needs a conclusion")
        return self

    @property
    def runs_code(self) -> bool:
        return self.type in (DecisionType.ANALYZE, DecisionType.DRILL_DOWN)
