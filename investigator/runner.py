"""The public verbs: investigate, resume, continue a run, and drive a created one (`run_loop`).

Each creates or loads the run (`runs`), gets its planner and kernel (`factories`, started while
the request is checked: `startup`), runs the loop, always cleans up, then writes the
artifacts and the report once."""

from __future__ import annotations

import contextlib
import errno
import shutil
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from investigator.config import Settings
from investigator.errors import Interrupted, InvestigatorError, StorageError
from investigator.factories import Hooks, LLMChoice, Progress, make_planner
from investigator.preflight import check_runs_dir, check_sandbox, choose_sandbox
from investigator.remembering import recognise, remember
from investigator.report.model import Phases, Report, build_report, write_report
from investigator.request import Request, metric_definition
from investigator.run.checks import CauseChecker, cause_checker
from investigator.run.guard import run_lock
from investigator.run.loop import InvestigationLoop, Ran
from investigator.run.seams import Kernel, Planner
from investigator.run.state import STATE_FILE, RunState, drop_unsaved, load, new_run_id, run_dir, save
from investigator.runs import DATAFRAME_FILE, forget_kernel_state, load_run, new_run, one_name_each, same_data
from investigator.sources.demo import demo_path
from investigator.sources.frames import write_frame
from investigator.sources.resolve import refuse_early
from investigator.sources.urls import is_url
from investigator.startup import (
    discard,
    preload_artifact_libraries,
    release,
    spawn_early,
    started_kernel,
)

if TYPE_CHECKING:
    pass


def run_loop(
    state: RunState, settings: Settings, planner: Planner, kernel: Kernel, progress: Progress | None = None
) -> Report:
    """Drive a created run to its conclusion and write its report (no artifacts: see `investigate`)."""
    folder = run_dir(settings.runs_dir, state.run_id)
    loop = InvestigationLoop(settings, folder, planner, kernel, progress)
    report = _report(loop, loop.run(state), settings)
    write_report(report, folder)
    return report


def _report(loop: InvestigationLoop, ran: Ran, settings: Settings, start_s: float = 0.0) -> Report:
    """The report of a loop's invocation, with the host's segment table and the phases' times."""
    segments = loop.cause_checker(ran.state).segment_table()
    phases = Phases(start_s=start_s, data_s=ran.data_s, loop_s=ran.loop_s)
    state = recognise(ran.state, settings)  # recall asked again with what the run found
    return build_report(state, segments, phases, earlier_s=ran.earlier_s)


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
    definition = metric_definition(request.metric, request.semantic_manifest)  # read once per run
    run_id = new_run_id()
    folder = run_dir(settings.runs_dir, run_id)
    if isinstance(data, pd.DataFrame):  # on disk before the kernel, which mounts it, starts
        one_name_each(data)
        folder.mkdir(parents=True, exist_ok=True)
        try:
            data = write_frame(data, folder / DATAFRAME_FILE)
        except BaseException:  # a column Arrow cannot type: one line, and no empty run folder
            shutil.rmtree(folder, ignore_errors=True)
            raise
    where = str(data or request.data or definition.data or demo_path())
    url = is_url(where)
    if url and settings.sandbox == "docker":  # the kernel mounts the extract: once the engine answered
        try:
            with _disk(folder, run_id):
                state = new_run(request, where, settings, settings.planner, run_id, definition)
        except BaseException:
            drop_unsaved(folder)
            raise
        checker = cause_checker(state, settings).start()
        kernel = started_kernel(settings, folder, state.data_path, reuse_kernel)
        return _run(state, settings, hooks, kernel, planner, started, reuse_kernel, checker)
    # a file, or a local kernel that will read the extract where the engine's answer is written:
    # the kernel starts while the data is checked (and the engine aggregates); a file's columns are
    # checked first, so a question they cannot answer is refused without a kernel started for it
    if not url:
        try:
            refuse_early(request, where, definition)
        except BaseException:
            drop_unsaved(folder)
            raise
    spawned = spawn_early(settings, folder)  # its kernel warms while this process imports the SDK
    if settings.sandbox != "inprocess":  # the MCP SDK first, alone: the server is reached sooner than
        import investigator.kernels.mcp  # noqa: F401  # when this import shares the GIL with validation
    mounted = None if url else str(Path(where).resolve())
    cancelled = threading.Event()
    with ThreadPoolExecutor(2) as pool:
        starting = pool.submit(started_kernel, settings, folder, mounted, reuse_kernel, spawned, cancelled)
        try:
            with _disk(folder, run_id):
                data_arg = where if url else Path(where)
                state = new_run(request, data_arg, settings, settings.planner, run_id, definition)
        except BaseException:
            discard(starting, folder, spawned, cancelled)
            raise
        checker = cause_checker(state, settings).start()  # while the kernel is still starting
        kernel = starting.result()
    return _run(state, settings, hooks, kernel, planner, started, reuse_kernel, checker)


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
    state = same_data(state, settings, force)
    planner = make_planner(settings, hooks, llm)
    forget_kernel_state(run_dir(settings.runs_dir, run_id))
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
    state = same_data(state, settings, force)
    settings = settings.model_copy(update={"max_iterations": state.iteration + iterations + 1})
    state = state.reopened(settings.run_settings())
    save(state, run_dir(settings.runs_dir, run_id))
    forget_kernel_state(run_dir(settings.runs_dir, run_id))
    return _run(state, settings, hooks or Hooks(), started=started)


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
        kernel = kernel or started_kernel(settings, folder, state.data_path, reuse)
        start_s = time.monotonic() - started
        pool.submit(preload_artifact_libraries)  # while the host mostly waits for the kernel
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
        try:  # the run is saved, concluded: an interrupt now leaves only the reports to write
            report = _report(loop, ran, settings, start_s)
            stopping = pool.submit(release, kernel, reuse)  # the kernel stops while the artifacts are drawn
            from investigator.report.artifacts import write_artifacts

            computed = loop.checker.computed() if loop.checker is not None else None
            write_artifacts(report, folder, settings.verify_tolerance, computed, hooks.warn)  # never raises
            stopping.result()
        except KeyboardInterrupt as e:
            raise Interrupted(state.run_id, True, reports_only=True) from e
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
