"""Hypotheses: what could explain the movement, and where the evidence stands on each. Each kind
of cause (`investigator.kinds`) offers its hypotheses and says which of its causes confirm which."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

HypothesisKind = Literal["data_quality", "seasonality", "segments", "mix", "rate", "broad_based", "drivers"]


class Status(StrEnum):
    PENDING = "PENDING"
    INVESTIGATING = "INVESTIGATING"
    CONFIRMED = "CONFIRMED"
    RULED_OUT = "RULED_OUT"
    NOT_TESTABLE = "NOT_TESTABLE"  # the data cannot test it (no comparable period, too little history)


class Update(BaseModel):
    """Set a hypothesis, named by id or by kind (data_quality, seasonality, ...), to a status."""

    kind: HypothesisKind | None = None
    hypothesis_id: str | None = None
    status: Status
    evidence: str


class Hypothesis(BaseModel):
    id: str
    statement: str
    kind: HypothesisKind  # which analysis tests it
    status: Status = Status.PENDING
    evidence: str = ""

    @property
    def open(self) -> bool:
        return self.status in (Status.PENDING, Status.INVESTIGATING)


def with_status(
    hypotheses: list[Hypothesis], hid: str | None, status: Status, evidence: str = ""
) -> list[Hypothesis]:
    """A new list with one hypothesis updated; unknown ids leave the list as it was."""
    return [
        h.model_copy(update={"status": status, "evidence": evidence or h.evidence}) if h.id == hid else h
        for h in hypotheses
    ]


def next_pending(hypotheses: list[Hypothesis]) -> Hypothesis | None:
    return next((h for h in hypotheses if h.status == Status.PENDING), None)


def current(hypotheses: list[Hypothesis]) -> Hypothesis | None:
    return next((h for h in hypotheses if h.status == Status.INVESTIGATING), None)
