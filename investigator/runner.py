"""Wiring for the front doors: pick the planner and kernel, run or resume, always clean up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .config import Settings
from .demo import demo_path
from .errors import ConfigError
from .investigation import Investigation, Progress, new_run
from .protocols import Kernel, Planner
from .report import Report
from .source import Request, metric_data
from .state import RunState, load, run_dir


def make_planner(name: str) -> Planner:
    if name == "offline":
        from .planners.offline import OfflinePlanner

        return OfflinePlanner()
    raise ConfigError(f"planner {name!r} is not available here; use --planner offline")


def make_kernel(settings: Settings, folder: Path) -> Kernel:
    workdir = folder / "workspace"
    if settings.sandbox == "inprocess":  # no isolation: tests and benchmarks only
        from sandbox.kernels.inprocess import InProcessKernel

        return InProcessKernel(workdir)
    if settings.sandbox == "local":
        from sandbox.kernels.local import LocalKernel

        return LocalKernel(workdir)
    raise ConfigError(f"sandbox {settings.sandbox!r} is not available yet; use --sandbox local")


def data_for(request: Request) -> Any:
    return request.data or metric_data(request.metric) or str(demo_path())


def investigate(request: Request, settings: Settings, progress: Progress | None = None) -> Report:
    data = data_for(request)
    request = request.model_copy(update={"data": str(data)})
    state = new_run(request, data, settings, planner=settings.planner)
    return _run(state, settings, progress)


def resume(run_id: str, settings: Settings, progress: Progress | None = None) -> Report:
    folder = run_dir(settings.runs_dir, run_id)
    if not (folder / "state.json").exists():
        raise ConfigError(f"no run {run_id!r} under {settings.runs_dir}; runs are folders there")
    state = load(folder)
    settings = settings.model_copy(update={"planner": state.planner, "sandbox": state.sandbox})
    return _run(state, settings, progress)


def _run(state: RunState, settings: Settings, progress: Progress | None) -> Report:
    folder = run_dir(settings.runs_dir, state.run_id)
    kernel = make_kernel(settings, folder)
    try:
        return Investigation(settings, make_planner(settings.planner), kernel, progress).run(state)
    finally:
        kernel.shutdown()
