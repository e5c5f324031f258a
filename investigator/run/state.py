"""Durable run state: one pydantic model, checkpointed atomically after every iteration.

Full outputs live beside it in `outputs/`, never in the state or the context.
"""

from __future__ import annotations

import json
import os
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from investigator.analysis.spec import AnalysisSpec
from investigator.run.decision import Decision
from investigator.run.hypotheses import Hypothesis
from investigator.sources.request import Request

STATE_FILE = "state.json"


class Finding(BaseModel):
    """A compressed output: what was tested, the key numbers, what it implies."""

    iteration: int
    decision: str
    hypothesis_id: str | None = None
    summary: str
    output_file: str | None = None
    error: bool = False


class RunState(BaseModel):
    run_id: str
    created_at: datetime
    status: Literal["running", "concluded", "partial", "failed"] = "running"
    request: Request
    spec: AnalysisSpec
    data_path: str
    planner: str
    sandbox: str
    settings: dict[str, Any] = Field(
        default_factory=dict, description="the loop settings the run started with"
    )
    hypotheses: list[Hypothesis]
    findings: list[Finding] = Field(default_factory=list)
    decisions: list[Decision] = Field(default_factory=list)
    evidence: dict[str, Any] = Field(default_factory=dict, description="latest structured result per kind")
    iteration: int = 0
    consecutive_errors: int = 0
    last_progress: int = 0  # iteration of the last hypothesis status change
    last_result: str = ""
    blockers: list[str] = Field(default_factory=list)
    notice: str | None = None  # something the planner must be told next iteration
    conclusion: Decision | None = None
    stop_reason: str | None = None
    elapsed_s: float = 0.0
    tokens: dict[str, int] = Field(default_factory=dict)

    @property
    def done(self) -> bool:
        return self.status in ("concluded", "partial")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


def run_dir(runs_dir: Path, run_id: str) -> Path:
    return Path(runs_dir) / run_id


def save(state: RunState, folder: Path) -> None:
    """Write state.json atomically: a crash leaves the previous checkpoint, never half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{STATE_FILE}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write(state.model_dump_json(indent=1))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, folder / STATE_FILE)


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
