"""What memory hands a run: approved facts and recalled past findings."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ApprovedFact(BaseModel):
    """A fact a person approved; only these enter a prompt."""

    id: str
    topic: str
    text: str


class Recalled(BaseModel):
    """A memory of a past run that entered this run's context."""

    run_id: str
    text: str
    score: float


class MemoryContext(BaseModel):
    facts: list[ApprovedFact] = Field(default_factory=list)
    recalled: list[Recalled] = Field(default_factory=list)
