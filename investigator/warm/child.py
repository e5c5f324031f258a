"""A run's own process, forked by the helper: it takes the client's terminal, folder, environment
and arguments and runs the command line as a cold `investigate` does (the `Command` the helper was
started with: `front.entry.run_cli`).

A worker (`run_worker`) warms up first and then waits for a run; a child forked cold
(`run_child` directly) has the helper's imports and nothing more. Either way nothing may take the
process back into the helper's code: it always ends with `os._exit`.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

from investigator.warm import wire
from investigator.warm.warmup import Reserve, warm_up

__all__ = ["Command", "run_child", "run_worker"]

Command = Callable[[float], int]  # the command line, begun at a `time.monotonic()`: its exit code

_HANDLED_BY_HELPER = (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD)


def run_worker(
    channel: socket.socket, reserve: Reserve | None, scratch: Path, command: Command | None
) -> NoReturn:
    """Warm up, say so on `channel` and wait there for a run: the helper sends the run's first
    message with the client's three descriptors and the client's connection. Killed while it waits
    or warms up, its folder is the helper's to remove (under `spares`)."""
    for signum in _HANDLED_BY_HELPER:
        signal.signal(signum, signal.SIG_DFL)
    try:
        warm_up(reserve, scratch)
        channel.send(b"r")
        request, fds = wire.receive(channel, 4)
        if len(fds) != 4:
            raise ValueError(f"{len(fds)} descriptors, not 4")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(1)
    channel.close()
    run_child(socket.socket(fileno=fds[3]), request, fds[:3], command, scratch=scratch)


def run_child(
    conn: socket.socket,
    request: dict[str, Any],
    fds: list[int],
    command: Command | None,
    scratch: Path | None = None,
) -> NoReturn:
    """Run the client's command on its terminal `fds` and answer on `conn`: our pid once the run
    starts, its exit code when it ends."""
    code = 1
    try:
        if command is None:
            raise RuntimeError("this helper was started without a command line to run")
        for signum in _HANDLED_BY_HELPER:
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        conn.settimeout(10)
        own, _ = wire.receive(conn)  # the run's own part, which the helper never read
        request = {**request, **own}
        _take_terminal(fds, request["env"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        sys.argv = ["investigate", *request["argv"]]
        conn.settimeout(None)
        wire.answer(conn, {"pid": os.getpid()})
        started = _started(request)
        threading.Thread(target=_stop_when_gone, args=(conn,), daemon=True).start()
        try:
            code = command(started)
        except KeyboardInterrupt:
            code = 130
    except BaseException as exc:  # the run's own errors are handled by the CLI; this is the helper's
        with contextlib.suppress(Exception):
            print(
                f"investigate: the warm helper could not run this ({type(exc).__name__}: {exc}); "
                "INVESTIGATOR_WARM=0 runs without it",
                file=sys.stderr,
            )
    finally:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client may go once it has the code
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            with contextlib.suppress(Exception):
                wire.answer(conn, {"exit": code})
        finally:
            os._exit(code)


def _started(request: dict[str, Any]) -> float:
    """When the client began, on this process's `time.monotonic()` clock: the run's stats start
    there, as a cold command's start at its own."""
    try:
        waited = max(0.0, time.time() - float(request.get("started", time.time())))
    except (TypeError, ValueError):
        waited = 0.0
    return time.monotonic() - min(waited, 60.0)


def _stop_when_gone(conn: socket.socket) -> None:
    """The client sends nothing after its request: the connection ending means it was killed.
    Stop as Ctrl-C would (the run keeps its checkpoints: `investigate resume`), rather than go on
    writing to a terminal nobody waits on."""
    with contextlib.suppress(OSError):
        if conn.recv(1) == b"":
            os.kill(os.getpid(), signal.SIGINT)


def _take_terminal(fds: list[int], env: dict[str, str]) -> None:
    """The client's stdin, stdout and stderr become ours, with Python's streams over them (the
    command line reads the terminal's colours and width when it starts)."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    encoding = env.get("PYTHONIOENCODING", "utf-8").split(":")[0] or "utf-8"
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False), encoding=encoding)
    for fd, name, errors in ((1, "stdout", "strict"), (2, "stderr", "backslashreplace")):
        tty = os.isatty(fd)
        stream = io.TextIOWrapper(
            io.FileIO(fd, "w", closefd=False),
            encoding=encoding,
            errors=errors,
            line_buffering=tty,
            write_through=fd == 2,
        )
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
