"""The warm helper: modules imported, one sandbox server with a started kernel in reserve, a fork
per run.

    python -m investigator.warm.daemon --folder DIR --key KEY [--idle SECONDS]

Started by `investigate` (`client.start_helper`), never by hand. One helper per key: it holds an
exclusive lock on `KEY.lock` for its whole life, so a second one started in a race exits at once.
The helper itself never starts a thread (a fork copies only the thread that calls it, and a lock
held by another thread would stay locked in the child); sandbox servers are plain subprocesses.
Its environment is the short list `client.HELPER_ENV`: a run's secrets reach only that run's child.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import io
import json
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["main"]

_HEADER = struct.calcsize("!Q")
_MAX_REQUEST = 8 * 2**20
_LOCK: Any = None


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


@dataclass
class Helper:
    folder: Path
    key: str
    idle_s: float
    spares: Path = field(init=False)
    reserve: Reserve | None = None
    children: dict[int, Reserve | None] = field(default_factory=dict)
    orphans: dict[Reserve, float] = field(default_factory=dict)  # used reserves whose child ended
    served: int = 0
    started: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        self.spares = self.folder / f"{self.key}.spares"

    # the loop ---------------------------------------------------------------------------------
    def serve(self, listener: socket.socket) -> None:
        self.reserve = Reserve.start(self.spares)
        last = time.monotonic()
        while True:
            ready, _, _ = select.select([listener], [], [], 1.0)
            self._reap()
            if not ready:
                if not self.children and time.monotonic() - last > self.idle_s:
                    return
                if self.reserve is not None and not self.reserve.alive():
                    self._drop(self.reserve)
                    self.reserve = Reserve.start(self.spares)
                continue
            conn, _ = listener.accept()
            last = time.monotonic()
            try:
                if not self._handle(conn, listener):
                    return
            finally:
                conn.close()

    def _handle(self, conn: socket.socket, listener: socket.socket) -> bool:
        """One request; False to stop serving."""
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid != os.getuid():
            return True
        conn.settimeout(10)
        try:
            request, fds = _receive(conn)
        except (OSError, ValueError):
            return True
        try:
            op = request.get("op")
            if op == "ping":
                _reply(conn, self._about())
            elif op == "stop":
                _reply(conn, {"stopping": True})
                return False
            elif op == "run" and len(fds) == 3:
                self._fork(conn, listener, request, fds)
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return True

    def _fork(
        self, conn: socket.socket, listener: socket.socket, request: dict[str, Any], fds: list[int]
    ) -> None:
        reserve = self.reserve if self.reserve is not None and self.reserve.alive() else None
        pid = os.fork()
        if pid == 0:
            listener.close()
            _LOCK.close()  # the helper's lock is not the run's to hold
            run_child(conn, request, fds, reserve)  # never returns
        self.served += 1
        self.children[pid] = reserve
        if reserve is not None:  # the child owns its pipes now; a new reserve warms for the next run
            for stream in (reserve.process.stdin, reserve.process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()  # type: ignore[union-attr]
            self.reserve = Reserve.start(self.spares)

    def _reap(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if not done:
                    continue
            reserve = self.children.pop(pid)
            if reserve is not None:
                self.orphans[reserve] = time.monotonic()
        for reserve, since in list(self.orphans.items()):
            if not reserve.alive() or time.monotonic() - since > 10:  # its run ended: it must go
                self._drop(reserve)
                del self.orphans[reserve]

    def _drop(self, reserve: Reserve) -> None:
        if reserve.alive():
            reserve.process.terminate()
            try:
                reserve.process.wait(5)
            except subprocess.TimeoutExpired:
                reserve.process.kill()
                reserve.process.wait()
        for stream in (reserve.process.stdin, reserve.process.stdout):
            with contextlib.suppress(Exception):
                stream.close()  # type: ignore[union-attr]
        shutil.rmtree(reserve.workspace, ignore_errors=True)

    def close(self) -> None:
        for reserve in [self.reserve, *self.orphans]:
            if reserve is not None:
                self._drop(reserve)
        shutil.rmtree(self.spares, ignore_errors=True)

    def _about(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "key": self.key,
            "exe": sys.executable,
            "started": self.started,
            "served": self.served,
            "running": len(self.children),
            "reserve": self.reserve is not None and self.reserve.alive(),
        }


# the child: one run, as a cold `investigate` would do it ----------------------------------------
def run_child(conn: socket.socket, request: dict[str, Any], fds: list[int], reserve: Reserve | None) -> None:
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        _take_terminal(fds, request["env"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        sys.argv = ["investigate", *request["argv"]]
        conn.settimeout(None)
        _reply(conn, {"pid": os.getpid()})
        if reserve is not None:
            _offer(reserve)
        code = _run_cli()
    except BaseException as exc:  # the run's own errors are handled by the CLI; this is the helper's
        with contextlib.suppress(Exception):
            print(
                f"investigate: the warm helper could not run this ({type(exc).__name__}: {exc}); "
                "INVESTIGATOR_WARM=0 runs without it",
                file=sys.stderr,
            )
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(Exception):
            _reply(conn, {"exit": code})
        os._exit(code)


def _run_cli() -> int:
    from investigator.front import cli

    try:
        cli.main()
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        print(exc.code, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def _take_terminal(fds: list[int], env: dict[str, str]) -> None:
    """The client's stdin, stdout and stderr become ours, with Python's streams over them."""
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
    from investigator.front import cli

    cli.take_terminal()


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


# plumbing ---------------------------------------------------------------------------------------
def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, _HEADER, 3)
    try:
        if len(head) != _HEADER:
            raise ValueError("short header")
        (size,) = struct.unpack("!Q", head)
        if size > _MAX_REQUEST:
            raise ValueError("request too large")
        body = b""
        while len(body) < size:
            chunk = conn.recv(min(65536, size - len(body)))
            if not chunk:
                raise ValueError("request cut short")
            body += chunk
        request = json.loads(body)
        if not isinstance(request, dict):
            raise ValueError("not an object")
        return request, list(fds)
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise


def _reply(conn: socket.socket, message: dict[str, Any]) -> None:
    conn.sendall(json.dumps(message).encode() + b"\n")


def _preload() -> None:
    """Everything a run imports, once: the CLI, the run, the MCP client, the engine, the charts."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib.backends.backend_agg
    import matplotlib.figure  # noqa: F401
    from ibis.backends import duckdb  # noqa: F401  # imported, not connected: a connection starts threads

    import investigator.front.cli
    import investigator.kernels.mcp
    import investigator.kernels.pipes
    import investigator.kernels.pool
    import investigator.report.artifacts
    import investigator.report.charts
    import investigator.report.html
    import investigator.report.trail
    import investigator.runner
    import investigator.sources.files  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m investigator.warm.daemon")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle", type=float, default=900.0)
    args = parser.parse_args(argv)
    global _LOCK
    _LOCK = open(args.folder / f"{args.key}.lock", "w")  # noqa: SIM115  # held for the helper's life
    try:
        fcntl.flock(_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another helper for this key is already up
    from sandbox.hardening import no_dumps

    no_dumps()
    _preload()
    path = args.folder / f"{args.key}.sock"
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a helper that died left it; the lock says none is serving it
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        listener.bind(str(path))
    finally:
        os.umask(old)
    listener.listen(16)
    helper = Helper(args.folder, args.key, args.idle)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        helper.serve(listener)
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener.close()
        helper.close()


if __name__ == "__main__":
    main()
