"""Token counts: what a planner's model calls used, per phase and direction, and the run's meter.

They serialise as the flat objects state.json and report.json have always held, e.g.
`{"decide_in": 900, "decide_out": 100, "total": 1000, "context_max": 2400}`: a phase that used
nothing is left out, and `total` is written for readers but recomputed on load, so checkpoints
written before these models existed load unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

__all__ = ["Phase", "TokenMeter", "Usage"]

Phase = Literal["decide", "compress", "reflect"]


class Usage(BaseModel):
    """Tokens used since some moment, in and out per phase: a planner hands the loop what it used
    since the last step, and the loop adds it to the run's `TokenMeter`. Named fields, so a
    misspelt phase fails where it is written rather than adding a key nobody reads."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    decide_in: int = 0
    decide_out: int = 0
    compress_in: int = 0
    compress_out: int = 0
    reflect_in: int = 0
    reflect_out: int = 0

    @property
    def total(self) -> int:
        return sum(self._phases().values())

    def counted(self, phase: Phase, tokens_in: int, tokens_out: int) -> Usage:
        """These counts with one call's tokens added."""
        return self + Usage.model_validate({f"{phase}_in": tokens_in, f"{phase}_out": tokens_out})

    def __add__(self, other: Usage) -> Usage:
        return self._combine(other, lambda a, b: a + b)

    def __sub__(self, other: Usage) -> Usage:
        """What was used between two readings of the same counter."""
        return self._combine(other, lambda a, b: a - b)

    def _phases(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in Usage.model_fields}

    def _combine(self, other: Usage, op: Callable[[int, int], int]) -> Usage:
        mine, theirs = self._phases(), other._phases()
        return Usage.model_validate({k: op(mine[k], theirs[k]) for k in mine})

    @model_serializer(mode="wrap")
    def _nonzero(self, handler: SerializerFunctionWrapHandler) -> dict[str, int]:
        return {k: v for k, v in handler(self).items() if v}


class TokenMeter(Usage):
    """The run's count, kept in its state: every phase's tokens since the run began (the budget
    rule reads `total`) and the largest context a planner was shown (the context budget's check)."""

    context_max: int = 0

    def spent(self, usage: Usage, context_tokens: int = 0) -> TokenMeter:
        """The meter after a planner's step: its usage added, the context it was shown measured."""
        added = (self + usage)._phases()
        return TokenMeter.model_validate({**added, "context_max": max(self.context_max, context_tokens)})

    @model_serializer(mode="wrap")
    def _nonzero(self, handler: SerializerFunctionWrapHandler) -> dict[str, int]:
        """A meter nothing went through yet is `{}`; else the phases used, the total, the context."""
        if not self.total and not self.context_max:
            return {}
        phases = {k: v for k, v in self._phases().items() if v}
        return {**phases, "total": self.total, "context_max": self.context_max}
