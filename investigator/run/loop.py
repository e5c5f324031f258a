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

from investigator.analysis.causes import RootCause
from investigator.config import RunSettings
from investigator.errors import KernelError
from investigator.protocols import Kernel, Planner
from investigator.report.model import Phases, Report, build_report, write_report
from investigator.run.checks import CauseChecker, refusal
from investigator.run.compress import Compressed, compress
from investigator.run.context import Context, build_context
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Status, with_status
from investigator.run.kernel_code import RELOADED, RESUMED, setup_code
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
from investigator.run.state import Finding, RunState, save, save_output
from investigator.run.verdict import conclusion_text, confidence, root_causes, with_facts
from investigator.sources.files import FileSource
from sandbox.models import ExecResult

Progress = Callable[[RunState, Decision | None], None]


def cause_checker(state: RunState, settings: RunSettings) -> CauseChecker:
    """The host's check of a run's causes, on the run's own data file."""
    return CauseChecker(FileSource(state.data_path), state.spec, settings.verify_tolerance)


class InvestigationLoop:
    """One run's iterations, apart from creating the run, so a new, resumed or `--more` run takes the
    same path; planner and kernel come in through their seams, so every planner (offline, LLM, a
    test's script) meets the same stop rules and the same host checks of what it claims."""

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

    def run(self, state: RunState) -> Report:
        earlier = state.elapsed_s
        started = time.monotonic()
        state = self.prepare_kernel(state).timed(time.monotonic() - started)
        data_s = state.elapsed_s - earlier
        save(state, self.folder)
        looping = time.monotonic()
        while not state.done:
            started = time.monotonic()
            state, decision = self.step(state)
            state = state.timed(time.monotonic() - started)
            save(state, self.folder)
            self.progress(state, decision)
        segments = self.cause_checker(state).segment_table()
        phases = Phases(data_s=data_s, loop_s=time.monotonic() - looping)
        report = build_report(state, segments, phases, earlier_s=earlier)
        write_report(report, self.folder)
        return report

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
        result = self.kernel.execute(decision.code or "", timeout=self.settings.execution_timeout_s)
        notice = None
        if result.restarted:
            self.load_data(state)
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
            decision, refused = self.verify(state, self.from_evidence(state))  # what the data says
        if refused is not None:  # not even the evidence's causes hold: claim none
            decision = self.from_evidence(state, causes=[])
        stopped = f"Stopped: {reason}. {decision.rationale}".strip()
        return self.conclude(
            state, decision.model_copy(update={"rationale": stopped}), reason, True
        ), decision

    def from_evidence(self, state: RunState, causes: list[RootCause] | None = None) -> Decision:
        """The conclusion the evidence gathered so far supports (the offline verdict)."""
        facts = state.memory.facts  # approved by a person: a known late segment reads as late data
        causes = with_facts(root_causes(state.evidence, state.spec), facts) if causes is None else causes
        return Decision(
            type=DecisionType.CONCLUDE,
            rationale="",
            conclusion=conclusion_text(causes, state.evidence, state.spec, facts),
            confidence="low" if not causes else confidence(causes, state.evidence),
            root_causes=causes,
        )

    # kernel ----------------------------------------------------------------------------------
    def prepare_kernel(self, state: RunState) -> RunState:
        """Start the kernel and load the data. A resumed run goes on from its saved evidence: the
        code of earlier steps is never run again (a run folder is data, and the code in it may be a
        model's, written under instructions planted in the data), so the planner is told that
        the new kernel holds only the data."""
        self.kernel.start()
        result = self.load_data(state)
        if state.iteration == 0 and not state.findings:
            setup = Decision(type=DecisionType.ANALYZE, rationale="Load the data", code="setup")
            compressed = compress(setup, result)
            return state.set_up(compressed.summary, compressed.results, result.text())
        return state if state.done else state.resumed(RESUMED)

    def load_data(self, state: RunState) -> ExecResult:
        """Load the data (the step most likely to run out of memory); a kernel that died doing it
        was restarted by the sandbox and gets one more try before the run gives up."""
        code = setup_code(state.spec, self.kernel.data_path(state.data_path))
        timeout = max(self.settings.execution_timeout_s, 120)
        result = self.kernel.execute(code, timeout=timeout)
        if not result.ok and result.restarted:
            result = self.kernel.execute(code, timeout=timeout)
            if not result.ok and result.restarted:
                raise KernelError(
                    "the kernel died twice while loading the data, most likely out of memory (the Docker "
                    "sandbox allows 2 GiB unless its server is started with --max-memory): use fewer "
                    "--dimensions or a shorter history, or give the sandbox more memory; the run is saved"
                )
        if not result.ok:
            detail = f"{result.error.name}: {result.error.value}" if result.error else "no output"
            raise KernelError(f"could not load the data in the kernel ({detail})")
        return result
