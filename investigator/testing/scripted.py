"""A `Planner` that plays a script and records what it was shown, for tests of the loop's rules."""

from __future__ import annotations

from collections.abc import Callable

from investigator.run.compress import Compressed
from investigator.run.context import Context
from investigator.run.decision import Decision, DecisionType, RootCause
from investigator.run.tokens import Usage
from sandbox.models import ExecResult

__all__ = ["ScriptedPlanner", "Step", "analyze", "conclude"]

Step = Decision | Callable[[Context], Decision]


def analyze(code: str, hypothesis_id: str | None = "H1", why: str = "scripted step") -> Decision:
    return Decision(type=DecisionType.ANALYZE, rationale=why, hypothesis_id=hypothesis_id, code=code)


def conclude(causes: list[RootCause] | None = None, text: str = "scripted conclusion") -> Decision:
    return Decision(
        type=DecisionType.CONCLUDE, rationale="scripted", conclusion=text, confidence="medium",
        root_causes=causes or [],
    )  # fmt: skip


class ScriptedPlanner:
    """Plays `steps` in order, then repeats `then` (default: conclude) forever."""

    name = "scripted"

    def __init__(self, steps: list[Step], then: Step | None = None) -> None:
        self.steps = list(steps)
        self.then = then or conclude()
        self.contexts: list[Context] = []

    def decide(self, context: Context) -> Decision:
        self.contexts.append(context)
        step = self.steps.pop(0) if self.steps and not context.must_conclude else self.then
        return step if isinstance(step, Decision) else step(context)

    def compress(self, decision: Decision, result: ExecResult, structured: Compressed) -> Compressed:
        return structured

    def take_usage(self) -> Usage:
        return Usage()
