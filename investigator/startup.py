"""Start-up overlap: the kernel a run needs, started while the host checks the request, and kept
or stopped after it (`pool` keeps one between runs in a process; the warm helper hands one over).

The sandbox server is spawned before the host imports the MCP SDK, so its kernel warms meanwhile; the
report's libraries are imported while the host mostly waits for the kernel.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from concurrent.futures import Future
from pathlib import Path

from investigator.config import Settings
from investigator.factories import make_kernel, sandbox_backend
from investigator.run.seams import Kernel
from investigator.run.state import drop_unsaved


def preload_artifact_libraries() -> None:
    """Import what the HTML report and the trail need during the loop, when the host mostly waits
    for the kernel (not while it starts: then the host's own imports are the critical path)."""
    with contextlib.suppress(Exception):  # only a head start: the real import reports problems
        import matplotlib.backends.backend_agg
        import matplotlib.figure  # noqa: F401

        from investigator.report import artifacts, charts, html, trail  # noqa: F401


def spawn_early(settings: Settings, folder: Path) -> subprocess.Popen[bytes] | None:
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


def started_kernel(
    settings: Settings,
    folder: Path,
    data_path: str | None,
    reuse: bool = False,
    spawned: subprocess.Popen[bytes] | None = None,
    cancelled: threading.Event | None = None,
) -> Kernel:
    """A kernel ready in the run's workspace: one kept from an earlier run in this process, or
    handed over by the warm helper (`investigator.warm`), when there is one; else a new one (on the
    server `spawned` for this run, if any: unused, it is stopped). Without `data_path` (a local
    kernel started before the warehouse's extract is written) the kernel reads the run's data where
    it lies, as a local kernel does."""
    if settings.sandbox != "inprocess":
        from investigator.kernels.pool import POOL

        pooled = POOL.take(sandbox_backend(settings), folder / "workspace", [data_path] if data_path else [])
        if pooled is not None:
            if spawned is not None:
                from investigator.kernels.spawn import stop_server

                stop_server(spawned)
            return pooled
    kernel = make_kernel(settings, folder, data_path, spawned, cancelled)
    kernel.start()
    return kernel


def release(kernel: Kernel, reuse: bool) -> None:
    """After a run that ended well: keep the kernel for the next run, or stop it."""
    if reuse:
        from investigator.kernels.mcp import McpKernel
        from investigator.kernels.pool import POOL

        if isinstance(kernel, McpKernel):
            POOL.give(kernel)
            return
    kernel.shutdown()


def discard(
    starting: Future[Kernel],
    folder: Path,
    spawned: subprocess.Popen[bytes] | None = None,
    cancelled: threading.Event | None = None,
) -> None:
    """The request was refused: stop the kernel started for it and remove the run folder, which
    holds nothing but that kernel's workspace (no state was ever saved).

    A server spawned for the run is killed at once, not waited for: a question the data's dates
    refuse was answered in about as long as the kernel's start took, for a kernel nobody will use.
    Its kernel ends with it (the guard's lifeline, `sandbox/kernel_guard.py`); the start, told by
    `cancelled`, gives up at the end of its pipe instead of starting a server of its own."""
    if cancelled is not None:
        cancelled.set()
    if spawned is not None:
        with contextlib.suppress(OSError):
            spawned.kill()
    with contextlib.suppress(Exception):  # the user's error is the one worth showing
        starting.result().shutdown()
    if spawned is not None:
        spawned.wait()
    drop_unsaved(folder)
