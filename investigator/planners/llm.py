"""The LLM planner: each step asks a model, through one validated call, what to do next.

Every call sees a fixed template plus the loop's bounded context (or, to compress, the step's own
record): no chat history. Every `reflect_every` iterations a short self-assessment re-ranks the
hypotheses and may raise blockers. When the model's answer stays invalid after the re-asks, or a
prompt would break the budget, the step falls back to the offline planner and the finding says so.
A stalled stream and an answer cut at its token cap fall back the same way. A conclusion is
written by the host (`host_words`): the model chooses the causes, never the sentences shown.
Transport failures that outlast the backoff, and a refused key, end the run (it is saved). Each
decision says whether the model's answer decided it (`answered_by`) and how many re-asks it took,
for the report's count.
"""

from __future__ import annotations

from collections.abc import Callable

from investigator.config import Settings
from investigator.llm.client import LLMClient
from investigator.llm.errors import InvalidOutput, ModelStalled, PromptTooLarge
from investigator.llm.prompts import build, step_record
from investigator.llm.schemas import NextStep, Reflection, StepFinding, bound
from investigator.llm.settings import LLMSettings
from investigator.llm.stream import OnTokens
from investigator.llm.wait import OnWait
from investigator.planners.host_words import host_conclusion
from investigator.planners.offline import OfflinePlanner, proposals
from investigator.run.compress import Compressed
from investigator.run.context import Context
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Hypothesis
from investigator.run.seams import Planner
from investigator.run.tokens import Usage
from sandbox.models import ExecResult

FALLBACK = "[offline fallback"  # how a fallback step reads (the `fallback` field is the flag)
# what ends one call without ending the run: the step (or its summary) is the offline planner's
SKIPPED = (InvalidOutput, PromptTooLarge, ModelStalled)

__all__ = ["FALLBACK", "LLMPlanner"]


class LLMPlanner:
    """The planner that asks a model. It sits behind the same `Planner` seam as the offline one, so
    the loop, the stop rules and the host's re-check of every claimed cause do not care which one
    decides. It does not own the token budget: it hands the tokens its client used to the loop
    (`take_usage`), whose state counts them and stops the run."""

    name = "llm"

    def __init__(
        self,
        llm: LLMSettings,
        settings: Settings,
        on_wait: OnWait | None = None,
        fallback: Planner | None = None,
        on_tokens: OnTokens | None = None,
        on_note: Callable[[str], None] | None = None,
    ):
        self.llm, self.settings = llm, settings
        self.client = LLMClient(llm, on_wait, on_tokens=on_tokens, on_note=on_note)
        self.fallback = fallback or OfflinePlanner()
        self._hypotheses: list[Hypothesis] = []  # the last context's, for the compress record
        self._left: int | None = None  # tokens the run's budget allowed at the last decision
        self._spent_at_decide = 0
        self._taken = Usage()  # the client's meter when the loop last took the usage
        self._failed_in_row = 0  # steps in a row the model could not decide
        self._on_note = on_note or (lambda _: None)

    def take_usage(self) -> Usage:
        now = self.client.usage
        used, self._taken = now - self._taken, now
        return used

    def decide(self, context: Context) -> Decision:
        self._hypotheses, self._left, self._spent_at_decide = (
            context.hypotheses,
            context.tokens_left,
            self._meter(),
        )
        ids = [h.id for h in context.hypotheses]
        if self._left is not None and self._left <= 0:
            used = f"the token budget ({self.settings.max_tokens_per_run}) is used"
            return self._fall_back(context, used, model_failed=False)
        if self._given_up():
            return self._fall_back(context, self._gave_up_why())
        reflection, note = None, ""
        if self._reflect_now(context):
            try:
                reflection = self.client.ask(
                    build("reflect", context.render(), self.settings.context_budget_tokens),
                    bound(Reflection, ids),
                )
            except SKIPPED as e:
                note = f" (Reflection skipped: {e})"
        try:
            step = self.client.ask(
                build("decide", context.render(), self.settings.context_budget_tokens),
                bound(NextStep, ids, must_conclude=context.must_conclude),
            )
            decision = step.to_decision().model_copy(
                update={"answered_by": "model", "reasks": self.client.reasks}
            )
            self._failed_in_row = 0
        except SKIPPED as e:
            decision = self._fall_back(context, str(e))
            self._failed_in_row += 1
            if self._given_up():
                self._on_note(
                    f"the model could not decide {self._failed_in_row} steps in a row: {self._gave_up_why()}"
                )
        if decision.type == DecisionType.CONCLUDE and decision.answered_by == "model":
            decision = host_conclusion(decision, context)  # the host's words; the model's as commentary
        if decision.type == DecisionType.CONCLUDE and not decision.proposed_facts:
            # the data problems it concluded, proposed for a person to review (never approved here)
            decision = decision.model_copy(
                update={"proposed_facts": proposals(decision.root_causes, context.spec)}
            )
        if reflection is not None:
            note = f" (Reflection: {reflection.assessment})"
            decision = decision.model_copy(
                update={"reranked": reflection.reranked, "blockers": reflection.blockers}
            )
        return decision.model_copy(update={"rationale": decision.rationale + note}) if note else decision

    def compress(self, decision: Decision, result: ExecResult, structured: Compressed) -> Compressed:
        offline = decision.fallback if decision.runs_code else None
        notes = [f"step chosen offline ({offline})"] if offline else []
        answer: StepFinding | None = None
        if self._over_budget():
            notes.append("library summary used (the token budget is used)")
        elif self._given_up():
            notes.append("library summary used (the model is no longer asked)")
        else:
            budget = self.settings.context_budget_tokens
            record = step_record(
                decision, result, structured, self._hypotheses, budget, self.settings.last_result_max_chars
            )
            ids = [h.id for h in self._hypotheses]
            try:
                answer = self.client.ask(build("compress", record, budget), bound(StepFinding, ids))
            except SKIPPED as e:
                notes.append(f"library summary used ({_plain(e)})")
        kinds = {h.id: h.kind for h in self._hypotheses}
        out = answer.to_compressed(structured, kinds) if answer is not None else structured
        if notes:
            out = out.model_copy(update={"summary": f"{FALLBACK}: {'; '.join(notes)}] {out.summary}"})
        return out

    def _given_up(self) -> bool:
        """A model that could not decide `give_up_after` steps in a row is not asked again in this
        run: on a small local model each such step costs a minute or more, and the next one fails
        alike. The run goes on offline; every step it planned counts as fallen back."""
        n = self.llm.give_up_after
        return bool(n) and self._failed_in_row >= n

    def _gave_up_why(self) -> str:
        return (
            f"the rest of this run is planned offline without asking the model (give_up_after: "
            f"{self.llm.give_up_after} steps in a row it could not decide)"
        )

    def _reflect_now(self, context: Context) -> bool:
        n = self.llm.reflect_every
        return bool(n) and not context.must_conclude and context.iteration > 0 and context.iteration % n == 0

    def _meter(self) -> int:
        return self.client.usage.total

    def _over_budget(self) -> bool:
        """The run's budget (counted by the loop) is used, including what this step spent so far."""
        return self._left is not None and self._meter() - self._spent_at_decide >= self._left

    def _fall_back(self, context: Context, reason: str, model_failed: bool = True) -> Decision:
        """The offline planner's step; `model_failed` counts it against the model (a used budget
        does not)."""
        decision = self.fallback.decide(context)
        return decision.model_copy(
            update={
                "rationale": f"{FALLBACK}: {_plain(reason)}] {decision.rationale}",
                "fallback": _plain(reason),
                "answered_by": "fallback" if model_failed else None,
            }
        )


def _plain(reason: object) -> str:
    """A reason without brackets, so the note around it ends at its own `]`."""
    return str(reason).replace("[", "(").replace("]", ")")
