"""Durable run state: one pydantic model, checkpointed atomically after every iteration.

`RunState` changes only through its transition methods below, each of which validates the new
state; the loop never edits fields by name. Full outputs live beside it in `outputs/`, never in the
state or the context.
"""

from __future__ import annotations

import json
import secrets
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from investigator.analysis.spec import AnalysisSpec
from investigator.config import RunSettings
from investigator.files import write_atomic
from investigator.kinds import confirmed_by
from investigator.memory.models import MemoryContext
from investigator.request import Request
from investigator.run.decision import Decision, DecisionType
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.guard import Fingerprint
from investigator.run.hypotheses import Hypothesis
from investigator.run.tokens import TokenMeter, Usage

STATE_FILE = "state.json"
Status = Literal["running", "concluded", "partial", "failed"]


class Finding(BaseModel):
    """A compressed output: what was tested, the key numbers, what it implies."""

    iteration: int
    decision: DecisionType | Literal["SETUP"]
    hypothesis_id: str | None = None
    summary: str
    output_file: str | None = None
    error: bool = False
    offline_fallback: bool = Field(False, description="the LLM planner fell back to the offline one here")


class RunState(BaseModel):
    """Everything a run knows, in one model, because a run must survive being killed: it is
    checkpointed after every iteration, and resuming starts from it alone, never by running the
    recorded code again. It changes only through the transitions below, so each change is validated
    and the loop reads as a list of named events rather than field edits."""

    run_id: str
    created_at: datetime
    status: Status = "running"
    request: Request
    spec: AnalysisSpec
    data_path: str
    planner: str
    sandbox: str
    settings: RunSettings = Field(description="the loop settings the run started with")
    hypotheses: list[Hypothesis]
    findings: list[Finding] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    evidence: Evidence = Field(default_factory=Evidence, description="latest structured result per kind")
    fingerprint: Fingerprint | None = Field(None, description="the input file as the run first read it")
    memory: MemoryContext = Field(
        default_factory=MemoryContext, description="approved facts and recalled findings, fixed at creation"
    )
    iteration: int = 0
    consecutive_errors: int = 0
    last_progress: int = 0  # iteration of the last hypothesis status change
    last_result: str = ""
    blockers: list[str] = Field(default_factory=list)
    notice: str | None = None  # something the planner must be told next iteration
    conclusion: Decision | None = None
    stop_reason: str | None = None
    elapsed_s: float = 0.0
    tokens: TokenMeter = Field(
        default_factory=TokenMeter, description="per phase, plus total and context_max"
    )

    @property
    def done(self) -> bool:
        return self.status in ("concluded", "partial")

    @property
    def tokens_used(self) -> int:
        return self.tokens.total

    # transitions: the only ways a run's state changes ------------------------------------------
    def _evolve(self, **changes: Any) -> RunState:
        """A validated copy: a misspelt field or a value of the wrong type fails here, loudly."""
        unknown = set(changes) - set(RunState.model_fields)
        if unknown:
            raise AttributeError(f"RunState has no field(s) {', '.join(sorted(unknown))}")
        return RunState.model_validate({**dict(self), **changes})

    def set_up(self, summary: str, results: list[AnalysisResult], output: str) -> RunState:
        """The data is loaded and the movement measured: iteration 0's finding."""
        return self._evolve(
            findings=[Finding(iteration=0, decision="SETUP", summary=summary)],
            evidence=self.evidence.with_results(results),
            last_result=output,
        )

    def timed(self, seconds: float) -> RunState:
        return self._evolve(elapsed_s=self.elapsed_s + seconds)

    def spent(self, usage: Usage, context_tokens: int = 0) -> RunState:
        """Add a planner's token use (per phase) and the size of the context it was shown."""
        return self._evolve(tokens=self.tokens.spent(usage, context_tokens))

    def planned(self, hypotheses: list[Hypothesis], blockers: list[str]) -> RunState:
        """The planner re-ranked the hypotheses or raised blockers."""
        return self._evolve(hypotheses=hypotheses, blockers=list(dict.fromkeys([*self.blockers, *blockers])))

    def pivoted(self, hypotheses: list[Hypothesis]) -> RunState:
        return self._evolve(hypotheses=hypotheses, consecutive_errors=0, last_progress=self.iteration + 1)

    def observed(
        self, hypotheses: list[Hypothesis], results: list[AnalysisResult], output: str, error: bool
    ) -> RunState:
        """A step ran in the kernel: its results, hypothesis updates and output are in."""
        progressed = hypotheses != self.hypotheses
        return self._evolve(
            hypotheses=hypotheses,
            evidence=self.evidence.with_results(results),
            consecutive_errors=self.consecutive_errors + 1 if error else 0,
            last_progress=self.iteration + 1 if progressed else self.last_progress,
            last_result=output,
        )

    def recorded(self, decision: Decision, finding: Finding, notice: str | None = None) -> RunState:
        """The iteration is complete: its decision and finding are kept."""
        return self._evolve(
            iteration=finding.iteration,
            findings=[*self.findings, finding],
            decisions=[*self.decisions, decision],
            notice=notice,
        )

    def resumed(self, notice: str) -> RunState:
        """The run goes on in a new kernel that has only the data: the planner is told."""
        return self._evolve(notice="\n".join(n for n in (self.notice, notice) if n))

    def concluded(self, decision: Decision, reason: str, partial: bool = False) -> RunState:
        return self._evolve(
            conclusion=decision,
            status="partial" if partial else "concluded",
            stop_reason=reason,
            hypotheses=confirmed_by(self.hypotheses, decision.root_causes),
        )

    def reopened(self, settings: RunSettings) -> RunState:
        """A finished or stopped run given more iterations: it runs and concludes again."""
        return self._evolve(
            status="running",
            conclusion=None,
            stop_reason=None,
            settings=settings,
            last_progress=self.iteration,
        )


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def run_dir(runs_dir: Path, run_id: str) -> Path:
    return Path(runs_dir) / run_id


def save(state: RunState, folder: Path) -> None:
    """Write state.json atomically: a crash leaves the previous checkpoint, never half a file."""
    write_atomic(folder / STATE_FILE, state.model_dump_json(indent=1))


def drop_unsaved(folder: Path) -> None:
    """Remove a run folder that never saved a state (a refused request): it holds no run."""
    if not (folder / STATE_FILE).exists():
        shutil.rmtree(folder, ignore_errors=True)


def load(folder: Path) -> RunState:
    return RunState.model_validate(json.loads((folder / STATE_FILE).read_text()))


def save_output(folder: Path, iteration: int, result: BaseModel, text: str) -> str:
    """Keep a step's full output on disk (as text and as the structured result); the context only
    ever sees a cut version."""
    out = folder / "outputs"
    out.mkdir(parents=True, exist_ok=True)
    name = f"outputs/iter_{iteration:03d}"
    (folder / f"{name}.txt").write_text(text)
    (folder / f"{name}.json").write_text(result.model_dump_json())
    return f"{name}.txt"
