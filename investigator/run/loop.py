"""The investigation loop, top to bottom:

    build bounded context -> decide -> execute in the kernel -> compress -> update hypotheses,
    check stalls and limits -> checkpoint -> repeat

Everything durable lives in `RunState`, checkpointed after every iteration, so a killed run resumes
from its last completed iteration and reaches the same report.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd

from investigator.config import Settings
from investigator.errors import KernelError
from investigator.protocols import Kernel, Planner
from investigator.report.model import Report, build_report, write_report
from investigator.run.compress import Compressed, compress
from investigator.run.context import Context, build_context
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Status, seed_hypotheses, with_status
from investigator.run.rules import (
    apply_updates,
    conclusion_refusal,
    forced_pivot,
    pivot_hypotheses,
    reorder,
    stall_reason,
)
from investigator.run.state import Finding, RunState, new_run_id, run_dir, save, save_output
from investigator.run.verdict import conclusion_text, confidence, root_causes
from investigator.sources.request import Request, resolve
from sandbox.models import ExecResult

SETUP = """\
from investigator.analysis import *
spec = AnalysisSpec.model_validate_json({spec!r})
table = open_table({path!r}, spec.time_column)
daily = daily_totals(table, spec)
cube = period_cube(table, spec)
print(f"loaded {{len(daily)}} days of {{spec.metric}} and a cube of {{len(cube)}} segments")
emit(movement(daily, spec))
"""
VERIFY = "emit(verify_causes(table, daily, cube, spec, {causes!r}, tolerance={tolerance!r}))"

DATAFRAME_FILE = "data.parquet"  # where a DataFrame given to a run is kept, inside the run folder
Progress = Callable[[RunState, Decision | None], None]


def new_run(
    request: Request, data: Any, settings: Settings, planner: str, run_id: str | None = None
) -> RunState:
    """Validate the request against the data (a path or a DataFrame) and create the run's first
    checkpoint. A DataFrame is saved into the run folder, so the kernel and a resume can read it."""
    spec, _ = resolve(request, data)
    run_id = run_id or new_run_id()
    folder = run_dir(settings.runs_dir, run_id)
    if isinstance(data, pd.DataFrame):
        folder.mkdir(parents=True, exist_ok=True)
        data.to_parquet(folder / DATAFRAME_FILE, index=False)
        data = folder / DATAFRAME_FILE
    state = RunState(
        run_id=run_id,
        created_at=datetime.now(UTC),
        request=request.model_copy(update={"data": str(data)}),
        spec=spec,
        data_path=str(Path(str(data)).resolve()),
        planner=planner,
        sandbox=settings.sandbox,
        settings=settings.model_dump(mode="json", exclude={"runs_dir"}),
        hypotheses=seed_hypotheses(spec),
    )
    save(state, folder)
    return state


class Investigation:
    def __init__(
        self, settings: Settings, planner: Planner, kernel: Kernel, progress: Progress | None = None
    ):
        self.settings, self.planner, self.kernel = settings, planner, kernel
        self.progress = progress or (lambda state, decision: None)

    def run(self, state: RunState) -> Report:
        folder = run_dir(self.settings.runs_dir, state.run_id)
        started = time.monotonic()
        state = self.prepare_kernel(state)
        state = state.model_copy(update={"elapsed_s": state.elapsed_s + time.monotonic() - started})
        save(state, folder)
        while not state.done:
            started = time.monotonic()
            state, decision = self.step(state, folder)
            state = state.model_copy(update={"elapsed_s": state.elapsed_s + time.monotonic() - started})
            save(state, folder)
            self.progress(state, decision)
        report = build_report(state)
        write_report(report, folder)
        return report

    # one iteration ---------------------------------------------------------------------------
    def step(self, state: RunState, folder: Path) -> tuple[RunState, Decision]:
        s = self.settings
        if state.iteration + 1 >= s.max_iterations:  # the last iteration is kept for the conclusion
            return self.finish(state, f"reached max_iterations ({s.max_iterations})")
        if s.max_tokens_per_run and sum(self.planner.usage.values()) >= s.max_tokens_per_run:
            return self.finish(state, f"used the token budget ({s.max_tokens_per_run})")
        stall = stall_reason(state, s)
        if stall:
            decision = forced_pivot(state.hypotheses, stall)
            if decision is None:
                return self.finish(state, f"stalled ({stall}) with no hypothesis left")
        else:
            context = self.context(state)
            state = state.model_copy(update={"tokens": self.tokens(state, context)})
            decision = self.planner.decide(context)
        state = state.model_copy(
            update={
                "tokens": self.tokens(state),
                "hypotheses": reorder(state.hypotheses, decision.reranked),
                "blockers": list(dict.fromkeys([*state.blockers, *decision.blockers])),
            }
        )

        if decision.type == DecisionType.CONCLUDE:
            refusal = conclusion_refusal(state, s)
            if refusal is None:
                decision, refusal = self.verify(decision)
            if refusal is None:
                return self.conclude(state, decision, "concluded"), decision
            return self.record(state, decision, Compressed(summary=refusal), notice=refusal), decision

        if decision.type == DecisionType.PIVOT:
            hyps = pivot_hypotheses(state.hypotheses, decision.hypothesis_id, stall or "planner pivoted")
            state = state.model_copy(
                update={"hypotheses": hyps, "consecutive_errors": 0, "last_progress": state.iteration + 1}
            )
            return self.record(state, decision, Compressed(summary=decision.rationale)), decision

        # ANALYZE / DRILL_DOWN: run the code in the kernel, keep the full output on disk
        hyps = state.hypotheses
        if any(h.id == decision.hypothesis_id and h.status == Status.PENDING for h in hyps):
            hyps = with_status(hyps, decision.hypothesis_id, Status.INVESTIGATING)
        result = self.kernel.execute(decision.code or "", timeout=s.execution_timeout_s)
        notice = None
        if result.restarted:
            self.setup_kernel(state)
            notice = "The kernel died and was restarted; the data was reloaded (table, daily, cube, spec)."
        compressed = self.planner.compress(decision, result, compress(decision, result))
        output_file = save_output(folder, state.iteration + 1, result, result.text())
        updated = apply_updates(hyps, compressed.updates)
        state = state.model_copy(
            update={
                "hypotheses": updated,
                "evidence": {**state.evidence, **compressed.evidence},
                "consecutive_errors": state.consecutive_errors + 1 if compressed.error else 0,
                "last_progress": state.iteration + 1 if updated != state.hypotheses else state.last_progress,
                "last_result": result.text(),
                "tokens": self.tokens(state),
            }
        )
        if compressed.error:
            notice = f"The last code failed: {compressed.summary}"
        return self.record(state, decision, compressed, output_file=output_file, notice=notice), decision

    def context(self, state: RunState, must_conclude: bool = False) -> Context:
        return build_context(
            state, self.settings, self.kernel.list_files(), notice=state.notice, must_conclude=must_conclude
        )

    def tokens(self, state: RunState, context: Context | None = None) -> dict[str, int]:
        """Planner token use per phase, plus the largest context seen (the budget's witness)."""
        seen = max(state.tokens.get("context_max", 0), context.tokens if context else 0)
        usage = {k: v for k, v in self.planner.usage.items() if v}
        return {**usage, "total": sum(usage.values()), "context_max": seen}

    def verify(self, decision: Decision) -> tuple[Decision, str | None]:
        """Recompute every claimed cause in the kernel; mark each, and refuse if any fails."""
        causes = [c.model_dump(mode="json") for c in decision.root_causes]
        result = self.kernel.execute(
            VERIFY.format(causes=causes, tolerance=self.settings.verify_tolerance),
            timeout=max(self.settings.execution_timeout_s, 120),
        )
        checks = _verification(result)
        if checks is None:
            return decision, None  # the check itself failed: accept, causes stay unmarked
        marked = [
            c.model_copy(update={"verified": chk["ok"]})
            for c, chk in zip(decision.root_causes, checks, strict=True)
        ]
        decision = decision.model_copy(update={"root_causes": marked})
        failed = [
            f"cause {chk['index'] + 1} ({chk['kind']}): {chk['reason']}" for chk in checks if not chk["ok"]
        ]
        return decision, ("Conclusion refused, verification failed: " + "; ".join(failed)) if failed else None

    # state transitions ------------------------------------------------------------------------
    def record(
        self,
        state: RunState,
        decision: Decision,
        compressed: Compressed,
        output_file: str | None = None,
        notice: str | None = None,
    ) -> RunState:
        n = state.iteration + 1
        finding = Finding(
            iteration=n,
            decision=decision.type.value,
            hypothesis_id=decision.hypothesis_id,
            summary=compressed.summary,
            output_file=output_file,
            error=compressed.error,
        )
        return state.model_copy(
            update={
                "iteration": n,
                "findings": [*state.findings, finding],
                "decisions": [*state.decisions, decision],
                "notice": notice,
            }
        )

    def conclude(self, state: RunState, decision: Decision, reason: str, partial: bool = False) -> RunState:
        state = self.record(state, decision, Compressed(summary=decision.conclusion or ""))
        return state.model_copy(
            update={
                "conclusion": decision,
                "status": "partial" if partial else "concluded",
                "stop_reason": reason,
            }
        )

    def finish(self, state: RunState, reason: str) -> tuple[RunState, Decision]:
        """Stop early with a partial conclusion: the planner's if it gives one, else the evidence's."""
        decision = self.planner.decide(self.context(state, must_conclude=True))
        if decision.type != DecisionType.CONCLUDE:
            causes = root_causes(state.evidence, state.spec)
            decision = Decision(
                type=DecisionType.CONCLUDE,
                rationale="",
                conclusion=conclusion_text(causes, state.evidence, state.spec),
                confidence="low" if not causes else confidence(causes, state.evidence),
                root_causes=causes,
            )
        decision, _ = self.verify(decision)
        decision = decision.model_copy(
            update={"rationale": f"Stopped: {reason}. {decision.rationale}".strip()}
        )
        state = state.model_copy(update={"tokens": self.tokens(state)})
        return self.conclude(state, decision, reason, partial=True), decision

    # kernel ----------------------------------------------------------------------------------
    def prepare_kernel(self, state: RunState) -> RunState:
        """Start the kernel and load the data; on resume, replay the code of earlier steps."""
        self.kernel.start()
        result = self.setup_kernel(state)
        if state.iteration == 0 and not state.findings:
            compressed = compress(
                Decision(type=DecisionType.ANALYZE, rationale="Load the data", code="setup"), result
            )
            finding = Finding(iteration=0, decision="SETUP", summary=compressed.summary)
            return state.model_copy(
                update={
                    "findings": [finding],
                    "evidence": {**state.evidence, **compressed.evidence},
                    "last_result": result.text(),
                }
            )
        for d in state.decisions:
            if d.runs_code:
                replayed = self.kernel.execute(d.code or "", timeout=self.settings.execution_timeout_s)
                if replayed.restarted:  # that step killed the kernel before too: reload the data
                    self.setup_kernel(state)
        return state

    def setup_kernel(self, state: RunState) -> ExecResult:
        code = SETUP.format(spec=state.spec.model_dump_json(), path=self.kernel.data_path(state.data_path))
        result = self.kernel.execute(code, timeout=max(self.settings.execution_timeout_s, 120))
        if not result.ok:
            detail = f"{result.error.name}: {result.error.value}" if result.error else "no output"
            raise KernelError(f"could not load the data in the kernel ({detail})")
        return result


def _verification(result: ExecResult) -> list[dict[str, Any]] | None:
    for item in result.data:
        payload = item.get("result") if isinstance(item, dict) else None
        if isinstance(payload, dict) and payload.get("kind") == "verification":
            return list(payload["checks"])
    return None
