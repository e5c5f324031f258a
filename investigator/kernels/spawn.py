"""Starting a stdio sandbox server, without the MCP SDK.

The host takes about a second to import the SDK. A local server spawned before that import (its
kernel warming at once, `--warm-workspace`) starts during that second instead of after it; the
host then speaks MCP to it over its pipes (`kernels.pipes`), as to a server the warm helper hands
over, and reaps it when the session ends (`McpKernel(process=...)`).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "INHERITED_ENV",
    "SERVER_COMMAND",
    "reap",
    "server_command",
    "server_env",
    "spawn_server",
    "stop_server",
]

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SERVER_COMMAND = (sys.executable, "-m", "sandbox")
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")  # the MCP SDK's default list
_PASSED_ENV = (
    "DOCKER_HOST",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "INVESTIGATOR_SANDBOX_IMAGE",
    "INVESTIGATOR_PRIVATE_DIR",  # which folder a local kernel must not see (sandbox.private)
    "XDG_CONFIG_HOME",
)


def server_env() -> dict[str, str]:
    """The environment a stdio sandbox server is given: MCP's short default list (HOME, PATH, ...),
    the Docker client's settings, where the private folder is and our PYTHONPATH; never API keys
    or database URLs."""
    env = {k: v for k in INHERITED_ENV if (v := os.environ.get(k)) is not None and not v.startswith("()")}
    env |= {k: os.environ[k] for k in _PASSED_ENV if k in os.environ}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(PROJECT_ROOT), os.environ.get("PYTHONPATH")) if p)
    return env


def server_command(base: Sequence[str], backend: str, workdir: Path | None) -> list[str]:
    """The command line of a stdio sandbox server; a local one starts its kernel at once."""
    cmd = [*base, "--backend", backend]
    if backend == "local" and workdir is not None:
        cmd += ["--warm-workspace", str(workdir)]
    return cmd


def spawn_server(workdir: Path) -> subprocess.Popen[bytes]:
    """A local stdio server whose first session's kernel starts in `workdir` at once."""
    return subprocess.Popen(
        server_command(SERVER_COMMAND, "local", Path(workdir).resolve()),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog(),
        env=server_env(),
    )


def stop_server(process: subprocess.Popen[bytes]) -> None:
    """A spawned server no session will use: it exits at the end of its input."""
    for pipe in (process.stdin, process.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
    reap(process)


def reap(process: subprocess.Popen[bytes], grace_s: float = 10.0) -> None:
    """Wait for a spawned server that lost its input (it exits by itself); kill one that does not."""
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def errlog() -> Any:
    """Where a child server's stderr goes: ours when it is a real file; otherwise (a notebook
    kernel whose stderr is a stream object without a descriptor) the process's own, else nowhere."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (OSError, ValueError, AttributeError):  # io.UnsupportedOperation is an OSError
            continue
    return open(os.devnull, "w")
