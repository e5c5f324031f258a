"""The thin side of the warm helper, run by `investigate`: hand the run to a helper and wait.

Stdlib only, so that asking costs a few milliseconds. When no helper answers, `run_warm` returns
None (the caller runs the investigation in-process, as without a helper) after starting one in
the background for the next run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import Any

from investigator.warm import wire
from investigator.warm.place import SANDBOX_ENV, folder, helper_key, idle_seconds, socket_path

__all__ = ["ask", "helpers", "run_warm", "start_helper", "start_pending"]

# the helper's own environment: what it needs to import and to start sandbox servers, never a
# secret (each run's child gets the client's whole environment, and only that child)
HELPER_ENV = (
    *SANDBOX_ENV,
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "VIRTUAL_ENV",
    "XDG_RUNTIME_DIR",
    "MPLCONFIGDIR",
)
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT)
# stop signals said in words before a run starts; Ctrl-C stays Python's (a run here handles it),
# and the command's own handler replaces these for the run (`front.cli._guard`)
EARLY = (signal.SIGTERM, signal.SIGHUP)
_CONNECT_S = 2.0
_pending: tuple[Path, str, dict[str, str], str] | None = None  # a helper to start once this run is done


def run_warm(
    argv: list[str], env: Mapping[str, str] | None = None, started: float | None = None, *, main: str
) -> int | None:
    """Run `investigate ARGV` in a helper with this process's terminal, folder and environment;
    its exit code, or None when no helper answered (one is started for next time, once this run is
    done: on a small machine starting it now would slow this run, as `python -m MAIN`, the module
    that gives the helper its command line). `started` (a `time.time()`) is when this command
    began, for the run's stats."""
    env = dict(os.environ if env is None else env)
    with contextlib.suppress(ValueError):  # not the main thread: the embedding caller's handlers stay
        for s in EARLY:  # until the run starts (or, run here, the command's own handlers take over)
            signal.signal(s, _stopped_early)
    where = folder(env)
    if where is None:
        return None
    key = helper_key(env)
    sock = _connect(socket_path(where, key))
    if sock is None:
        global _pending
        _pending = (where, key, env, main)
        return None
    with sock:
        return _serve_run(sock, argv, env, time.time() if started is None else started)


def _serve_run(sock: socket.socket, argv: list[str], env: Mapping[str, str], started: float) -> int | None:
    """The request in two messages (`wire`): the helper routes by the first; the second (the
    arguments and the environment, with its secrets) is read by the run's own process."""
    run = {"argv": argv, "cwd": os.getcwd(), "env": dict(env), "started": started}
    try:
        wire.send(sock, {"op": "run"}, [0, 1, 2])
        wire.send(sock, run)
    except OSError:
        return None  # it went away between connect and send: run here
    replies = wire.answers(sock)
    first = next(replies, None)
    if first is None or "pid" not in first:
        return None  # refused before forking (shutting down, a thread alive): nothing ran, run here
    child = int(first["pid"])

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signum)

    previous = {s: signal.signal(s, forward) for s in FORWARDED}
    try:
        for reply in replies:
            if "exit" in reply:
                return int(reply["exit"])
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    print(
        f"investigate: the warm helper's run (pid {child}) ended without an exit code; what it saved "
        "is in its run folder (`investigate resume` with the folder's name, the newest in runs/). "
        "INVESTIGATOR_WARM=0 runs without a helper.",
        file=sys.stderr,
    )
    return 1


def _stopped_early(signum: int, _frame: FrameType | None) -> None:
    """A stop signal before any run started (while asking a helper, or while the command still
    imports to run here): say so and what to do, rather than end silently with 128+signal."""
    os.write(
        2, b"investigate: interrupted before the run started; nothing was saved: run the same command again\n"
    )
    os._exit(130)


def ask(path: Path, op: str) -> dict[str, Any] | None:
    """A control request (`ping`, `stop`) to the helper at `path`; its answer, or None."""
    sock = _connect(path)
    if sock is None:
        return None
    with sock:
        try:
            wire.send(sock, {"op": op})
            return next(wire.answers(sock), None)
        except OSError:
            return None


def helpers(env: Mapping[str, str] | None = None) -> list[tuple[Path, dict[str, Any]]]:
    """Every helper of this user that answers, with what it says of itself."""
    where = folder(dict(os.environ if env is None else env))
    if where is None:
        return []
    found = []
    for path in sorted(where.glob("*.sock")):
        info = ask(path, "ping")
        if info is not None:
            found.append((path, info))
    return found


def start_pending() -> None:
    """Start the helper `run_warm` found missing (the command calls this as it exits)."""
    global _pending
    if _pending is not None:
        start_helper(*_pending)
        _pending = None


_LEFT_RUNNING: list[subprocess.Popen[bytes]] = []
"""Helpers this process started: it means to leave them running, and keeps their handles so the
interpreter does not warn about a child still alive when a handle is collected."""


def start_helper(where: Path, key: str, env: Mapping[str, str], main: str) -> None:
    """Start a helper (`python -m MAIN`, which hands `daemon.main` the command line it serves) in
    the background (its own session, no terminal), stopping this installation's helpers for older
    code first. Never fails the run that asked."""
    for path, info in helpers(env):
        if info.get("exe") == sys.executable and info.get("key") != key:
            ask(path, "stop")
    own = {
        k: v
        for k, v in env.items()
        if k in HELPER_ENV or k.startswith("LC_") or k.startswith("INVESTIGATOR_WARM")
    }
    cmd = [sys.executable, "-m", main, "--folder", str(where), "--key", key]
    cmd += ["--idle", str(idle_seconds(env))]
    with contextlib.suppress(OSError), open(where / f"{key}.log", "ab") as log:
        _LEFT_RUNNING.append(
            subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                cwd="/",
                env=own,
                start_new_session=True,
            )
        )


def _connect(path: Path) -> socket.socket | None:
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(_CONNECT_S)
    try:
        sock.connect(str(path))
        if not wire.same_user(sock):
            sock.close()
            return None
    except OSError:
        sock.close()
        return None
    sock.settimeout(None)
    return sock
