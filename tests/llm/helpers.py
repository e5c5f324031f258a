"""Helpers for LLM-path tests: loop settings and a whole investigation on a real local kernel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from investigator.config import Settings, load_settings
from investigator.report.model import Report
from investigator.request import Request
from investigator.run.seams import Planner
from investigator.run.state import run_dir
from investigator.runner import run_loop
from investigator.runs import new_run
from sandbox.kernels.local import LocalKernel

FAST: dict[str, Any] = {
    "rate_limit_backoff_s": [0.001, 0.002, 0.003],
    "connection_backoff_s": [0.001, 0.002, 0.003, 0.004, 0.005],
    "max_wait_s": 0.05,
    "stall_timeout_s": 5.0,
    "connect_timeout_s": 1.0,
}


def loop_settings(tmp_path: Path, **overrides: Any) -> Settings:
    return load_settings(runs_dir=tmp_path / "runs", **overrides)


def investigate(
    scenario: tuple[Path, dict[str, Any]], settings: Settings, planner: Planner
) -> tuple[Report, Path]:
    """Run a whole investigation on a real local kernel, as `runner._run` does."""
    path, truth = scenario
    request = Request(
        metric=truth["metric"],
        data=str(path),
        window=truth["window"],
        end=truth["end"],
        time_column=truth["time_column"],
        dimensions=truth["dimensions"],
    )
    state = new_run(request, str(path), settings, planner=planner.name)
    folder = run_dir(settings.runs_dir, state.run_id)
    kernel = LocalKernel(folder / "workspace")
    try:
        return run_loop(state, settings, planner, kernel), folder
    finally:
        kernel.shutdown()
