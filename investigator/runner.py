"""Wiring for the front doors: create a run, pick the planner and kernel, run, resume or continue,
always clean up, then write the artifacts."""

from __future__ import annotations

import contextlib
import errno
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pandas as pd
from pydantic import BaseModel

from investigator.analysis.spec import AnalysisSpec
from investigator.config import MetricDefinition, Settings
from investigator.errors import ConfigError, DataError, Interrupted, InvestigatorError, StorageError
from investigator.fmt import clip
from investigator.memory import load_recall_model, recall, remember
from investigator.preflight import check_runs_dir, check_sandbox, choose_sandbox
from investigator.protocols import Kernel, Planner
from investigator.report.model import Phases, Report, build_report, write_report
from investigator.request import Request, metric_definition
from investigator.run.checks import CauseChecker, cause_checker
from investigator.run.decision import Decision
from investigator.run.guard import check_unchanged, fingerprint, run_lock
from investigator.run.hypotheses import seed_hypotheses
from investigator.run.loop import InvestigationLoop, Ran
from investigator.run.state import STATE_FILE, RunState, load, new_run_id, run_dir, save
from investigator.sources import source_for
from investigator.sources.demo import demo_path
from investigator.sources.extract import EXTRACT_FILE, write_extract
from investigator.sources.frames import write_frame
from investigator.sources.resolve import resolve
from investigator.sources.urls import is_url, redact

if TYPE_CHECKING:
    from investigator.llm.wait import OnWait

DATAFRAME_FILE = "data.parquet"  # where a DataFrame given to a run is kept, inside the run folder
Progress = Callable[[RunState, Decision | None], None]


@dataclass(frozen=True)
class Hooks:
    """What a front door plugs in: progress updates, a countdown while the LLM backs off, and where
    a one-line warning goes."""

    progress: Progress | None = None
    on_wait: OnWait | None = None
    warn: Callable[[str], None] | None = None


class LLMChoice(BaseModel):
    """The front door's choices for the LLM planner (flags or keyword arguments); unset keeps
    `configs/llm.yaml` and the environment."""

    model: str | None = None
    mode: str | None = None


def make_planner(settings: Settings, hooks: Hooks | None = None, llm: LLMChoice | None = None) -> Planner:
    hooks = hooks or Hooks()
    if settings.planner == "offline":
        from investigator.planners.offline import OfflinePlanner

        return OfflinePlanner()
    if settings.planner == "llm":  # imported lazily: openai and instructor are slow to load
        from investigator.llm import load_llm_settings
        from investigator.planners.llm import LLMPlanner

        choice = (llm or LLMChoice()).model_dump(exclude_none=True)
        return LLMPlanner(load_llm_settings(**choice), settings, on_wait=hooks.on_wait)
    raise ConfigError(f"planner {settings.planner!r} is not one of offline, llm")


def make_kernel(
    settings: Settings, folder: Path, data_path: str, spawned: subprocess.Popen[bytes] | None = None
) -> Kernel:
    """The agent reaches the kernel only through an MCP client session (stdio to a child server,
    `spawned` ahead of time when given), whatever the backend; `inprocess` skips all of that and is
    for tests and benchmarks only."""
    workdir = folder / "workspace"
    if settings.sandbox == "inprocess":
        from investigator.kernels.inprocess import InProcessKernel

        return InProcessKernel(workdir)
    from investigator.kernels.mcp import McpKernel

    backend = _backend(settings)
    assert backend in ("local", "docker"), backend  # inprocess returned above; auto is resolved
    return McpKernel(backend=backend, workdir=workdir, data_files=[data_path], process=spawned)


def _backend(settings: Settings) -> Literal["local", "docker", "inprocess"]:
    """The sandbox backend, `auto` resolved (a daemon is checked once per run, by `choose_sandbox`)."""
    backend = choose_sandbox(settings).sandbox if settings.sandbox == "auto" else settings.sandbox
    assert backend != "auto", backend
    return backend


def new_run(
    request: Request,
    data_path: str | Path,
    settings: Settings,
    planner: str,
    run_id: str | None = None,
    definition: MetricDefinition | None = None,
) -> RunState:
    """Validate the request against the data and save the run's first checkpoint.

    A file is read where it is. A connection URL is validated in its engine, which then writes the
    run's aggregated extract (`sources.extract`) into the run folder: that file is the run's data
    from here on (kernel, cause check, resume), and the run keeps the URL without its password.
    """
    definition = definition or metric_definition(request.metric)
    run_id = run_id or new_run_id()
    data = str(data_path)
    if is_url(data):
        spec, data_file = _extract(request, data, definition, run_dir(settings.runs_dir, run_id))
        stored = redact(data)
    else:
        load_recall_model(settings)  # while the file is checked
        spec, _ = resolve(request, data_path, definition)
        stored, data_file = data, str(Path(data_path).resolve())
    state = RunState(
        fingerprint=fingerprint(data_file),
        memory=recall(settings, spec),
        run_id=run_id,
        created_at=datetime.now(UTC),
        request=request.model_copy(update={"data": stored}),
        spec=spec,
        data_path=data_file,
        planner=planner,
        sandbox=_backend(settings),
        settings=settings.run_settings(),
        hypotheses=seed_hypotheses(spec),
    )
    save(state, run_dir(settings.runs_dir, state.run_id))
    return state


def _extract(
    request: Request, url: str, definition: MetricDefinition, folder: Path
) -> tuple[AnalysisSpec, str]:
    """Validate in the engine and write the extract; on any failure leave no run folder behind."""
    source = source_for(url, request.table or definition.table, request.sql or definition.sql)
    try:
        spec, table = resolve(request, source, definition)
        extract = write_extract(table, spec, folder / EXTRACT_FILE)
    except BaseException:
        if not (folder / STATE_FILE).exists():
            shutil.rmtree(folder, ignore_errors=True)
        raise
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
    return spec, extract.path


def run_loop(
    state: RunState, settings: Settings, planner: Planner, kernel: Kernel, progress: Progress | None = None
) -> Report:
    """Drive a created run to its conclusion and write its report (no artifacts: see `investigate`)."""
    folder = run_dir(settings.runs_dir, state.run_id)
    loop = InvestigationLoop(settings, folder, planner, kernel, progress)
    report = _report(loop, loop.run(state))
    write_report(report, folder)
    return report


def _report(loop: InvestigationLoop, ran: Ran, start_s: float = 0.0) -> Report:
    """The report of a loop's invocation, with the host's segment table and the phases' times."""
    segments = loop.cause_checker(ran.state).segment_table()
    phases = Phases(start_s=start_s, data_s=ran.data_s, loop_s=ran.loop_s)
    return build_report(ran.state, segments, phases, earlier_s=ran.earlier_s)


def investigate(
    request: Request,
    settings: Settings,
    hooks: Hooks | None = None,
    data: pd.DataFrame | str | Path | None = None,
    llm: LLMChoice | None = None,
    reuse_kernel: bool = False,
    started: float | None = None,
) -> Report:
    """Validate and run. The kernel starts in the background while the data is being checked: the
    two take about as long as each other, and neither needs the other. With `reuse_kernel`, a
    kernel left by an earlier run in this process is reset and used, and this run's is kept for
    the next (`kernels.pool`): for the notebook and triage, which run many in a row. `started`
    (a `time.monotonic()`) is when the caller began, the command line's imports included."""
    started = time.monotonic() if started is None else started
    hooks = hooks or Hooks()
    check_runs_dir(settings.runs_dir)
    check_sandbox(settings)
    settings = choose_sandbox(settings, hooks.warn)
    planner = make_planner(settings, hooks, llm)  # a missing key or a bad planner fails before anything
    definition = metric_definition(request.metric)  # metrics.yaml is read once per run
    run_id = new_run_id()
    folder = run_dir(settings.runs_dir, run_id)
    if isinstance(data, pd.DataFrame):  # on disk before the kernel, which mounts it, starts
        _one_name_each(data)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            data = write_frame(data, folder / DATAFRAME_FILE)
        except BaseException:  # a column Arrow cannot type: one line, and no empty run folder
            shutil.rmtree(folder, ignore_errors=True)
            raise
    where = str(data or request.data or definition.data or demo_path())
    if is_url(where):  # the kernel mounts the extract, which exists once the engine has answered
        with _disk(folder, run_id):
            state = new_run(request, where, settings, settings.planner, run_id, definition)
        checker = cause_checker(state, settings).start()
        kernel = _started_kernel(settings, folder, state.data_path, reuse_kernel)
        return _run(state, settings, hooks, kernel, planner, started, reuse_kernel, checker)
    path = Path(where)
    spawned = _spawn_early(settings, folder)  # its kernel warms while this process imports the SDK
    if settings.sandbox != "inprocess":  # the MCP SDK first, alone: the server is reached sooner than
        import investigator.kernels.mcp  # noqa: F401  # when this import shares the GIL with validation
    with ThreadPoolExecutor(2) as pool:
        starting = pool.submit(_started_kernel, settings, folder, str(path.resolve()), reuse_kernel, spawned)
        try:
            with _disk(folder, run_id):
                state = new_run(request, path, settings, settings.planner, run_id, definition)
        except BaseException:
            _discard(starting, folder)
            raise
        checker = cause_checker(state, settings).start()  # while the kernel is still starting
        kernel = starting.result()
    return _run(state, settings, hooks, kernel, planner, started, reuse_kernel, checker)


def _one_name_each(frame: pd.DataFrame) -> None:
    """A DataFrame with two columns of one name cannot be a table (every engine, and the run's
    Parquet copy, needs one column per name): say which, before anything is written."""
    twice = list(dict.fromkeys(str(c) for c in frame.columns[frame.columns.duplicated()]))
    if twice:
        names = clip(", ".join(repr(n) for n in twice), 120)
        raise DataError(
            f"the DataFrame has more than one column named {names}: rename them, or keep one of each "
            "with df.loc[:, ~df.columns.duplicated()]"
        )


def _preload_artifact_libraries() -> None:
    """Import what the HTML report and the trail need during the loop, when the host mostly waits
    for the kernel (not while it starts: then the host's own imports are the critical path)."""
    with contextlib.suppress(Exception):  # only a head start: the real import reports problems
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401

        from investigator.report import artifacts, charts, html, trail  # noqa: F401


def _spawn_early(settings: Settings, folder: Path) -> subprocess.Popen[bytes] | None:
    """A local sandbox server for this run, started before the host imports the MCP SDK (about a
    second), unless a kernel kept in this process will serve the run (`kernels.pool`: it holds
    none until its module is loaded) or the server cannot be started here (then `make_kernel`
    starts one as usual and says why it could not)."""
    if settings.sandbox != "local":
        return None
    pool = sys.modules.get("investigator.kernels.pool")
    if pool is not None and pool.POOL.idle("local"):
        return None
    from investigator.kernels.spawn import spawn_server

    try:
        return spawn_server(folder / "workspace")
    except OSError:
        return None


def _started_kernel(
    settings: Settings,
    folder: Path,
    data_path: str,
    reuse: bool = False,
    spawned: subprocess.Popen[bytes] | None = None,
) -> Kernel:
    """A kernel ready in the run's workspace: one kept from an earlier run in this process, or
    handed over by the warm helper (`investigator.warm`), when there is one; else a new one (on the
    server `spawned` for this run, if any: unused, it is stopped)."""
    if settings.sandbox != "inprocess":
        from investigator.kernels.pool import POOL

        pooled = POOL.take(_backend(settings), folder / "workspace", [data_path])
        if pooled is not None:
            if spawned is not None:
                from investigator.kernels.spawn import stop_server

                stop_server(spawned)
            return pooled
    kernel = make_kernel(settings, folder, data_path, spawned)
    kernel.start()
    return kernel


def _release(kernel: Kernel, reuse: bool) -> None:
    """After a run that ended well: keep the kernel for the next run, or stop it."""
    if reuse:
        from investigator.kernels.mcp import McpKernel
        from investigator.kernels.pool import POOL

        if isinstance(kernel, McpKernel):
            POOL.give(kernel)
            return
    kernel.shutdown()


def load_run(run_id: str, settings: Settings) -> tuple[RunState, Settings]:
    """A saved run and the settings it started with (the caller's `runs_dir` still applies)."""
    folder = run_dir(settings.runs_dir, run_id)
    if not (folder / "state.json").exists():
        raise ConfigError(f"no run {run_id!r} under {settings.runs_dir}; runs are folders there")
    state = load(folder)
    saved = {**state.settings.model_dump(), "planner": state.planner, "sandbox": state.sandbox}
    return state, settings.model_copy(update=saved)


def resume(
    run_id: str,
    settings: Settings,
    hooks: Hooks | None = None,
    llm: LLMChoice | None = None,
    force: bool = False,
    started: float | None = None,
) -> Report:
    """Continue a run from its last completed iteration, with the settings it started with. On
    data that changed since, refuse; with `force`, run it again from the start on the new data."""
    started = time.monotonic() if started is None else started
    check_runs_dir(settings.runs_dir)
    state, settings = load_run(run_id, settings)
    check_sandbox(settings)
    state = _same_data(state, settings, force)
    planner = make_planner(settings, hooks, llm)
    _forget_kernel_state(run_dir(settings.runs_dir, run_id))
    return _run(state, settings, hooks or Hooks(), planner=planner, started=started)


def continue_run(
    run_id: str,
    settings: Settings,
    iterations: int = 5,
    hooks: Hooks | None = None,
    force: bool = False,
    started: float | None = None,
) -> Report:
    """Give a finished or stopped run more iterations: it reopens and concludes again."""
    started = time.monotonic() if started is None else started
    check_runs_dir(settings.runs_dir)
    state, settings = load_run(run_id, settings)
    check_sandbox(settings)
    state = _same_data(state, settings, force)
    settings = settings.model_copy(update={"max_iterations": state.iteration + iterations + 1})
    state = state.reopened(settings.run_settings())
    save(state, run_dir(settings.runs_dir, run_id))
    _forget_kernel_state(run_dir(settings.runs_dir, run_id))
    return _run(state, settings, hooks or Hooks(), started=started)


def _forget_kernel_state(folder: Path) -> None:
    """Remove the DataFrames an earlier kernel pickled into the workspace, so a resumed run's
    kernel does not load them: unpickling runs code, and a kernel (or whoever had the run folder)
    wrote those files. The resumed run goes on from state.json's evidence instead."""
    from sandbox.sessions import STATE_DIR

    saved = folder / "workspace" / STATE_DIR
    if saved.is_symlink() or saved.is_file():
        saved.unlink()
    elif saved.is_dir():
        shutil.rmtree(saved, ignore_errors=True)  # never follows a link inside


def _same_data(state: RunState, settings: Settings, force: bool) -> RunState:
    """The run's input as it started, or (forced) the run over again from its request on the data
    as it is now: never a movement from one file beside causes from another."""
    if not force:
        check_unchanged(state.fingerprint, state.data_path, state.run_id)
        return state
    request = state.request.model_copy(update={"data": state.data_path})
    return new_run(request, state.data_path, settings, state.planner, state.run_id)


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
    started: float | None = None,
    reuse: bool = False,
    checker: CauseChecker | None = None,
) -> Report:
    """Run the loop, then the artifacts, timing each phase from `started` (the front door's call):
    report.json is written when the loop ends and again, whole, with the artifacts' time. The
    host's cause check reads the data in the background from the start (`checker`, if the caller
    started it already)."""
    started = time.monotonic() if started is None else started
    folder = run_dir(settings.runs_dir, state.run_id)
    with _disk(folder, state.run_id), run_lock(folder, state.run_id), ThreadPoolExecutor(1) as pool:
        checker = checker or cause_checker(state, settings).start()
        planner = planner or make_planner(settings, hooks)
        kernel = kernel or _started_kernel(settings, folder, state.data_path, reuse)
        start_s = time.monotonic() - started
        pool.submit(_preload_artifact_libraries)  # while the host mostly waits for the kernel
        loop = InvestigationLoop(settings, folder, planner, kernel, hooks.progress, checker)
        try:
            ran = loop.run(state)
        except InvestigatorError as e:  # messages that suggest a command name this run
            kernel.shutdown()
            e.run_id = state.run_id
            raise
        except KeyboardInterrupt as e:
            kernel.shutdown()
            raise Interrupted(state.run_id, (folder / STATE_FILE).exists()) from e
        except BaseException:
            kernel.shutdown()
            raise
        finishing = time.monotonic()
        report = _report(loop, ran, start_s)
        stopping = pool.submit(_release, kernel, reuse)  # the kernel stops while the artifacts are drawn
        from investigator.report.artifacts import write_artifacts

        computed = loop.checker.computed() if loop.checker is not None else None
        write_artifacts(report, folder, settings.verify_tolerance, computed, hooks.warn)  # never raises
        stopping.result()
    for warning in remember(load(folder), report, settings):  # never raises: memory is a bonus
        if hooks.warn is not None:
            hooks.warn(warning)
    report = report.model_copy(update={"stats": report.stats.timed(artifacts_s=time.monotonic() - finishing)})
    with _disk(folder, state.run_id):
        write_report(report, folder)
    return report


_FULL = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS}  # the folder cannot take more


@contextlib.contextmanager
def _disk(folder: Path, run_id: str) -> Iterator[None]:
    """A full disk (a file over the size limit, a read-only mount) while the run writes its folder
    is one line saying what is kept, never a traceback: checkpoints are written whole or not at
    all, so the last one stands and `resume` goes on from it once there is room."""
    try:
        yield
    except OSError as e:
        if e.errno not in _FULL:
            raise
        why = e.strerror or str(e)
        try:
            saved: int | None = load(folder).iteration
        except Exception:  # no checkpoint at all (or none readable)
            saved = None
        if saved is None:
            raise StorageError(
                f"could not write {folder} ({why}); nothing was saved: free space, then run it again"
            ) from None
        raise StorageError(
            f"could not write {folder} ({why}); the run is saved up to iteration {saved}: free space, "
            f"then `investigate resume {run_id}`"
        ) from None
