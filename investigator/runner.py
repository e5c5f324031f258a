"""Wiring for the front doors: pick the planner and kernel, run, resume or continue, always clean up."""

from __future__ import annotations

import contextlib
import shutil
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

from investigator.config import Settings
from investigator.errors import ConfigError
from investigator.protocols import Kernel, Planner
from investigator.report.model import Report
from investigator.run.loop import DATAFRAME_FILE, Investigation, new_run
from investigator.run.state import STATE_FILE, RunState, load, new_run_id, run_dir, save
from investigator.sources.demo import demo_path
from investigator.sources.request import Request, metric_data


class Hooks(BaseModel):
    """What a front door plugs in: progress updates, a countdown while the LLM backs off, and
    overrides of the LLM settings (model, mode)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    progress: Any = None
    on_wait: Any = None
    llm: dict[str, Any] = Field(default_factory=dict)


def make_planner(settings: Settings, hooks: Hooks | None = None) -> Planner:
    hooks = hooks or Hooks()
    if settings.planner == "offline":
        from investigator.planners.offline import OfflinePlanner

        return OfflinePlanner()
    if settings.planner == "llm":  # imported lazily: openai and instructor are slow to load
        from investigator.llm import load_llm_settings
        from investigator.planners.llm import LLMPlanner

        return LLMPlanner(load_llm_settings(**hooks.llm), settings, on_wait=hooks.on_wait)
    raise ConfigError(f"planner {settings.planner!r} is not one of offline, llm")


def make_kernel(settings: Settings, folder: Path, data_path: str) -> Kernel:
    """The agent reaches the kernel only through an MCP client session (stdio to a child server),
    whatever the backend; `inprocess` skips all of that and is for tests and benchmarks only."""
    workdir = folder / "workspace"
    if settings.sandbox == "inprocess":
        from investigator.kernels.inprocess import InProcessKernel

        return InProcessKernel(workdir)
    from investigator.kernels.mcp import McpKernel

    return McpKernel(backend=settings.sandbox, workdir=workdir, data_files=[data_path])


def data_for(request: Request, data: Any = None) -> Any:
    """The data: given, else the request's path, else the metric's configured data, else the demo."""
    if data is not None:
        return data
    return request.data or metric_data(request.metric) or str(demo_path())


def investigate(request: Request, settings: Settings, hooks: Hooks | None = None, data: Any = None) -> Report:
    """Validate and run. The kernel starts in the background while the data is being checked: the
    two take about as long as each other, and neither needs the other."""
    hooks = hooks or Hooks()
    planner = make_planner(settings, hooks)  # a missing key or a bad planner fails before anything starts
    data = data_for(request, data)
    run_id = new_run_id()
    folder = run_dir(settings.runs_dir, run_id)
    if isinstance(data, pd.DataFrame):  # on disk before the kernel, which mounts it, starts
        folder.mkdir(parents=True, exist_ok=True)
        data.to_parquet(folder / DATAFRAME_FILE, index=False)
        data = folder / DATAFRAME_FILE
    with ThreadPoolExecutor(2) as pool:
        starting = pool.submit(_started_kernel, settings, folder, str(Path(str(data)).resolve()))
        pool.submit(_preload_artifact_libraries)
        try:
            state = new_run(request, data, settings, planner=settings.planner, run_id=run_id)
        except BaseException:
            _discard(starting, folder)
            raise
        kernel = starting.result()
    return _run(state, settings, hooks, kernel, planner)


def _preload_artifact_libraries() -> None:
    """Import what the HTML report and the trail need while the host waits for the kernel anyway."""
    with contextlib.suppress(Exception):  # only a head start: the real import reports problems
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401

        from investigator.report import artifacts, charts, html, trail  # noqa: F401


def _started_kernel(settings: Settings, folder: Path, data_path: str) -> Kernel:
    kernel = make_kernel(settings, folder, data_path)
    kernel.start()
    return kernel


def load_run(run_id: str, settings: Settings) -> tuple[RunState, Settings]:
    """A saved run and the settings it started with (the caller's `runs_dir` still applies)."""
    folder = run_dir(settings.runs_dir, run_id)
    if not (folder / "state.json").exists():
        raise ConfigError(f"no run {run_id!r} under {settings.runs_dir}; runs are folders there")
    state = load(folder)
    saved = {**state.settings, "planner": state.planner, "sandbox": state.sandbox}
    return state, settings.model_copy(update={k: v for k, v in saved.items() if k in Settings.model_fields})


def resume(run_id: str, settings: Settings, hooks: Hooks | None = None) -> Report:
    """Continue a run from its last completed iteration, with the settings it started with."""
    state, settings = load_run(run_id, settings)
    return _run(state, settings, hooks or Hooks())


def continue_run(run_id: str, settings: Settings, iterations: int = 5, hooks: Hooks | None = None) -> Report:
    """Give a finished or stopped run more iterations: it reopens and concludes again."""
    state, settings = load_run(run_id, settings)
    settings = settings.model_copy(update={"max_iterations": state.iteration + iterations + 1})
    state = state.model_copy(
        update={
            "status": "running",
            "conclusion": None,
            "stop_reason": None,
            "settings": settings.model_dump(mode="json", exclude={"runs_dir"}),
            "last_progress": state.iteration,
        }
    )
    save(state, run_dir(settings.runs_dir, run_id))
    return _run(state, settings, hooks or Hooks())


def _discard(starting: Future[Kernel], folder: Path) -> None:
    """The request was refused: stop the kernel started for it and remove the run folder, which
    holds nothing but that kernel's workspace (no state was ever saved)."""
    with contextlib.suppress(Exception):  # the user's error is the one worth showing
        starting.result().shutdown()
    if not (folder / STATE_FILE).exists():
        shutil.rmtree(folder, ignore_errors=True)


def _run(
    state: RunState,
    settings: Settings,
    hooks: Hooks,
    kernel: Kernel | None = None,
    planner: Planner | None = None,
) -> Report:
    folder = run_dir(settings.runs_dir, state.run_id)
    planner = planner or make_planner(settings, hooks)
    # a resumed run keeps counting its tokens: stats and the budget carry over
    planner.usage.update({k: v for k, v in state.tokens.items() if k not in ("total", "context_max")})
    kernel = kernel or make_kernel(settings, folder, state.data_path)
    with ThreadPoolExecutor(1) as pool:
        try:
            report = Investigation(settings, planner, kernel, hooks.progress).run(state)
        except BaseException:
            kernel.shutdown()
            raise
        stopping = pool.submit(kernel.shutdown)  # the kernel stops while the artifacts are drawn
        from investigator.report.artifacts import write_artifacts

        write_artifacts(report, folder, settings.verify_tolerance)  # warns, never raises
        stopping.result()
    return report
