"""What the helper pays for once, ahead of a run: the imports (`preload`, in the helper), a sandbox
server started with its kernel (`Reserve`, by the helper, just before it forks a worker), and one
small investigation through that server (`warm_up`, in the worker), after which the server waits
in the kernel pool for the run (`offer`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Reserve", "preload", "warm_up"]


@dataclass(eq=False)
class Reserve:
    """A stdio sandbox server started with its kernel warming in `workspace`, not yet used."""

    process: subprocess.Popen[bytes]
    workspace: Path

    @classmethod
    def start(cls, spares: Path) -> Reserve | None:
        from investigator.kernels.mcp import SERVER_COMMAND, server_command, server_env

        workspace = spares / f"spare-{time.monotonic_ns()}"
        try:
            workspace.mkdir(parents=True)
            process = subprocess.Popen(
                server_command(SERVER_COMMAND, "local", workspace),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=server_env(),
                cwd="/",
            )
        except OSError:
            return None
        return cls(process, workspace)

    def alive(self) -> bool:
        return self.process.poll() is None

    def let_go(self) -> None:
        """Close this process's ends of the server's pipes: the worker forked with them owns them."""
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(Exception):
                stream.close()  # type: ignore[union-attr]

    def stop(self) -> None:
        """End the server (its run is over, or it never got one) and remove its workspace."""
        if self.alive():
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.let_go()
        shutil.rmtree(self.workspace, ignore_errors=True)


def warm_up(reserve: Reserve | None, scratch: Path) -> None:
    """One investigation of a small generated table, offline, through the reserved server, its
    kernel kept for the run (which resets it: an empty namespace in the run's own workspace).
    Written to a scratch folder, memory included: nothing of it reaches the user's runs."""
    scratch.mkdir(parents=True, mode=0o700)
    with contextlib.suppress(Exception), open(os.devnull, "w") as quiet:
        from investigator.config import load_settings
        from investigator.request import Request
        from investigator.runner import investigate
        from investigator.sources.synth import generate

        if reserve is not None:
            _offer(reserve)
        frame, _ = generate(days=35, scale=0.2)
        frame.to_parquet(scratch / "warm-up.parquet")
        settings = load_settings(
            runs_dir=scratch / "runs", home=scratch / "home", sandbox="local", planner="offline"
        )
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            investigate(
                Request(metric="revenue", data=str(scratch / "warm-up.parquet")), settings, reuse_kernel=True
            )


def _offer(reserve: Reserve) -> None:
    """Put the reserved server in the kernel pool: the run takes it instead of starting its own."""
    from functools import partial

    from investigator.kernels.mcp import McpKernel
    from investigator.kernels.pipes import pipe_transport
    from investigator.kernels.pool import POOL

    assert reserve.process.stdout is not None and reserve.process.stdin is not None
    # our own descriptors for the transport to close; the file objects are closed here
    read_fd, write_fd = os.dup(reserve.process.stdout.fileno()), os.dup(reserve.process.stdin.fileno())
    reserve.process.stdout.close()
    reserve.process.stdin.close()
    kernel = McpKernel(
        "local", workdir=reserve.workspace, transport=partial(pipe_transport, read_fd, write_fd)
    )
    POOL.offer(kernel)


def preload() -> None:
    """Everything a run imports, once: the run, the MCP client, the engine, the charts (the front
    door's own modules are the helper's `main`'s to import)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401
    from ibis.backends import duckdb  # noqa: F401  # imported, not connected: a connection starts threads

    import investigator.kernels.mcp
    import investigator.kernels.pipes
    import investigator.kernels.pool
    import investigator.report.artifacts
    import investigator.report.charts
    import investigator.report.html
    import investigator.report.trail
    import investigator.runner
    import investigator.sources.files  # noqa: F401
