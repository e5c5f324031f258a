"""The planner's output: one pydantic `Decision` per iteration, whichever planner made it."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field, model_validator

CauseKind = Literal[
    "segment_change",
    "rate_change",
    "mix_shift",
    "data_quality",
    "seasonality",
    "broad_based",
    "no_change",
]
Confidence = Literal["high", "medium", "low"]


class DecisionType(StrEnum):
    ANALYZE = "ANALYZE"
    DRILL_DOWN = "DRILL_DOWN"
    PIVOT = "PIVOT"
    CONCLUDE = "CONCLUDE"


class RootCause(BaseModel):
    """One reason the metric moved. `segment` is {} for the whole metric."""

    kind: CauseKind
    segment: dict[str, str] = Field(default_factory=dict)
    contribution: float | None = Field(None, description="share of the change explained")
    detail: str | None = None
    evidence: str = ""
    verified: bool | None = Field(None, description="recomputed from the data before concluding")


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
