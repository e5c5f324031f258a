"""Runs of the offline planner in-process on a file, for the bad-input tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from investigator.config import load_settings
from investigator.kernels.inprocess import InProcessKernel
from investigator.planners.offline import OfflinePlanner
from investigator.report.model import Report
from investigator.request import Request
from investigator.run.evidence import input_notes
from investigator.run.state import RunState, load, run_dir
from investigator.runner import run_loop
from investigator.runs import new_run


def run(path: Path, tmp: Path, **fields: Any) -> tuple[Report, RunState]:
    """The report, and the run's final state (its spec and evidence)."""
    settings = load_settings(runs_dir=tmp / "runs")
    state = new_run(Request(data=str(path), **fields), path, settings, "offline")
    report = run_loop(state, settings, OfflinePlanner(), InProcessKernel())
    return report, load(run_dir(settings.runs_dir, report.run_id))


def notes(state: RunState) -> list[str]:
    """What the report must say about how the input was read."""
    return input_notes(state.spec, state.evidence)
