"""The investigation loop, top to bottom:

    build bounded context -> decide -> execute in the kernel -> compress -> update hypotheses,
    check stalls and limits -> checkpoint -> repeat

Everything durable lives in `RunState`, changed only through its transitions and checkpointed after
every iteration, so a killed run resumes from its last completed iteration and reaches the same
report: from the state's evidence, never by running the recorded code again. Creating a run is the
runner's job; the code sent to the kernel is `kernel_code`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from investigator.config import RunSettings
from investigator.run.checks import CauseChecker, cause_checker, refusal
from investigator.run.compress import Compressed, compress
from investigator.run.context import Context, build_context
from investigator.run.decision import Decision, DecisionType
from investigator.run.fallback import evidence_decision
from investigator.run.hypotheses import Status, with_status
from investigator.run.kernel_code import RELOADED, load_data, prepare
from investigator.run.rules import (
    ForcedPivot,
    Stop,
    apply_updates,
    conclusion_refusal,
    limits,
    pivot_hypotheses,
    reorder,
    tokens_left,
)
from investigator.run.seams import Kernel, Planner
from investigator.run.state import Finding, RunState, save, save_output

Progress = Callable[[RunState, Decision | None], None]


class Ran(NamedTuple):
    """What one invocation of the loop ends with: the final state, the run's time before it
    (earlier invocations of a resumed run), and its own: kernel and data, then the iterations."""

    state: RunState
    earlier_s: float
    data_s: float
    loop_s: float


class InvestigationLoop:
    """One run's iterations, apart from creating the run, so a new, resumed or `--more` run takes the
    same path; planner and kernel come in through their seams, so every planner (offline, LLM, a
    test's script) meets the same stop rules and the same host checks of what it claims. It returns
    the final state: the report and the artifacts are the caller's."""

    def __init__(
        self,
        settings: RunSettings,
        folder: Path,
        planner: Planner,
        kernel: Kernel,
        progress: Progress | None = None,
        checker: CauseChecker | None = None,
    ):
        self.settings, self.folder, self.planner, self.kernel = settings, folder, planner, kernel
        self.progress = progress or (lambda state, decision: None)
        self.checker = checker  # the host's check of this run's causes; made on first use if None

    def run(self, state: RunState) -> Ran:
        earlier = state.elapsed_s
        started = time.monotonic()
        state = prepare(self.kernel, state, self.settings).timed(time.monotonic() - started)
        data_s = state.elapsed_s - earlier
        save(state, self.folder)
        looping = time.monotonic()
        while not state.done:
            started = time.monotonic()
            state, decision = self.step(state)
            state = state.timed(time.monotonic() - started)
            save(state, self.folder)
            self.progress(state, decision)
        return Ran(state, earlier, data_s, time.monotonic() - looping)

    # one iteration ---------------------------------------------------------------------------
    def step(self, state: RunState) -> tuple[RunState, Decision]:
        rule = limits(state, self.settings)
        if isinstance(rule, Stop):
            return self.finish(state, rule.reason)
        if isinstance(rule, ForcedPivot):
            decision = rule.decision
        else:
            context = self.context(state)
            decision = self.planner.decide(context)
            state = state.spent(self.planner.take_usage(), context.tokens)
        state = state.planned(reorder(state.hypotheses, decision.reranked), decision.blockers)

        if decision.type == DecisionType.CONCLUDE:
            refused = conclusion_refusal(state, self.settings)
            if refused is None:
                decision, refused = self.verify(state, decision)
            if refused is None:
                return self.conclude(state, decision, "concluded"), decision
            return self.record(state, decision, Compressed(summary=refused), notice=refused), decision

        if decision.type == DecisionType.PIVOT:
            reason = rule.reason if isinstance(rule, ForcedPivot) else "planner pivoted"
            state = state.pivoted(pivot_hypotheses(state.hypotheses, decision.hypothesis_id, reason))
            return self.record(state, decision, Compressed(summary=decision.rationale)), decision

        # ANALYZE / DRILL_DOWN: run the code in the kernel, keep the full output on disk
        hyps = state.hypotheses
        if any(h.id == decision.hypothesis_id and h.status == Status.PENDING for h in hyps):
            hyps = with_status(hyps, decision.hypothesis_id, Status.INVESTIGATING)
        self.cause_checker(state).ahead(state.evidence, decision.code or "")  # begun while the kernel runs
        result = self.kernel.execute(decision.code or "", timeout=self.settings.execution_timeout_s)
        notice = None
        if result.restarted:
            load_data(self.kernel, state, self.settings)
            notice = RELOADED
        compressed = self.planner.compress(decision, result, compress(decision, result))
        state = state.spent(self.planner.take_usage())
        output_file = save_output(self.folder, state.iteration + 1, result, result.text())
        hyps = apply_updates(hyps, compressed.updates)
        state = state.observed(hyps, compressed.results, result.text(), compressed.error)
        if compressed.error:
            notice = f"The last code failed: {compressed.summary}"
        return self.record(state, decision, compressed, output_file=output_file, notice=notice), decision

    def context(self, state: RunState, must_conclude: bool = False) -> Context:
        return build_context(
            state,
            self.settings,
            self.kernel.list_files(),
            notice=state.notice,
            must_conclude=must_conclude,
            tokens_left=tokens_left(state, self.settings),
        )

    def verify(self, state: RunState, decision: Decision) -> tuple[Decision, str | None]:
        """Recompute every claimed cause on the host; mark each, and refuse if any fails or if the
        check cannot run."""
        try:
            checked = self.cause_checker(state).check(decision.root_causes)
        except Exception as e:  # fail closed: an unchecked cause is never accepted
            return decision, f"Conclusion refused: the causes could not be checked ({type(e).__name__}: {e})"
        marked = [
            c.model_copy(update={"verified": chk.ok})
            for c, chk in zip(decision.root_causes, checked.checks, strict=True)
        ]
        return decision.model_copy(update={"root_causes": marked}), refusal(checked)

    def cause_checker(self, state: RunState) -> CauseChecker:
        if self.checker is None or self.checker.spec != state.spec:
            self.checker = cause_checker(state, self.settings)
        return self.checker

    # ending a step ---------------------------------------------------------------------------
    def record(
        self,
        state: RunState,
        decision: Decision,
        compressed: Compressed,
        output_file: str | None = None,
        notice: str | None = None,
    ) -> RunState:
        finding = Finding(
            iteration=state.iteration + 1,
            decision=decision.type,
            hypothesis_id=decision.hypothesis_id,
            summary=compressed.summary,
            output_file=output_file,
            error=compressed.error,
            offline_fallback=decision.fallback is not None,
        )
        return state.recorded(decision, finding, notice)

    def conclude(self, state: RunState, decision: Decision, reason: str, partial: bool = False) -> RunState:
        state = self.record(state, decision, Compressed(summary=decision.conclusion or ""))
        return state.concluded(decision, reason, partial)

    def finish(self, state: RunState, reason: str) -> tuple[RunState, Decision]:
        """Stop early with a partial conclusion: the planner's if it gives one, else the evidence's."""
        context = self.context(state, must_conclude=True)
        decision = self.planner.decide(context)
        state = state.spent(self.planner.take_usage(), context.tokens)
        refused = None
        if decision.type == DecisionType.CONCLUDE:
            decision, refused = self.verify(state, decision)
        if decision.type != DecisionType.CONCLUDE or refused is not None:
            decision, refused = self.verify(state, evidence_decision(state))  # what the data says
        if refused is not None:  # not even the evidence's causes hold: claim none
            decision = evidence_decision(state, causes=[])
        stopped = f"Stopped: {reason}. {decision.rationale}".strip()
        return self.conclude(
            state, decision.model_copy(update={"rationale": stopped}), reason, True
        ), decision
