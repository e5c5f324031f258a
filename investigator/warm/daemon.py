"""The warm helper: modules imported once, and a worker forked ahead of each run that has already
run one small investigation through its own sandbox server.

    python -m investigator.warm.daemon --folder DIR --key KEY [--idle SECONDS]

Started by `investigate` (`client.start_helper`), never by hand. One helper per key: it holds an
exclusive lock on `KEY.lock` for its whole life, so a second one started in a race exits at once.
The helper itself never starts a thread (a fork copies only the thread that calls it, and a lock
held by another thread would stay locked in the child); sandbox servers are plain subprocesses,
and the worker, which does start threads, never forks. A run goes to the waiting worker; when
there is none (two runs at once), to a child forked cold. The next worker warms up once no run is
under way. Its environment is the short list `client.HELPER_ENV`: a run's secrets reach only
that run's process.
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
import threading
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


@dataclass(eq=False)
class Worker:
    """A child forked ahead of the next run. It runs one small investigation through its own
    reserved sandbox server (every lazy import, cache and the kernel itself warmed), keeps that
    kernel in its pool, says so on `channel` and waits there for a run."""

    pid: int
    channel: socket.socket
    reserve: Reserve | None
    scratch: Path  # its warm-up run's folder
    ready: bool = False


@dataclass
class Helper:
    folder: Path
    key: str
    idle_s: float
    listener: socket.socket
    spares: Path = field(init=False)
    worker: Worker | None = None
    children: dict[int, Reserve | None] = field(default_factory=dict)  # runs under way
    orphans: dict[Reserve, float] = field(default_factory=dict)  # used reserves whose run ended
    failures: int = 0  # workers that died before a run: after three, runs fork cold
    served: int = 0
    started: float = field(default_factory=time.time)

    def __post_init__(self) -> None:
        self.spares = self.folder / f"{self.key}.spares"

    # the loop ---------------------------------------------------------------------------------
    def serve(self) -> None:
        self.worker = self._prefork()
        last = time.monotonic()
        while True:
            waiting = self.worker.channel if self.worker is not None and not self.worker.ready else None
            ready, _, _ = select.select([self.listener, *([waiting] if waiting else [])], [], [], 1.0)
            if waiting is not None and waiting in ready and self.worker is not None:
                self.worker.ready = waiting.recv(1) == b"r"  # nothing: it died, `_reap` sees it
            self._reap()
            if self.listener not in ready:
                if not self.children and time.monotonic() - last > self.idle_s:
                    return
                continue
            conn, _ = self.listener.accept()
            last = time.monotonic()
            try:
                if not self._handle(conn):
                    return
            finally:
                conn.close()

    def _handle(self, conn: socket.socket) -> bool:
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
                if not self._hand_over(conn, request, fds):
                    self._fork_cold(conn, request, fds)
                self.served += 1
        finally:
            for fd in fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
        return True

    def _hand_over(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> bool:
        """Give the run to the waiting worker (still warming up, it takes the run when done)."""
        worker, self.worker = self.worker, None
        if worker is None:
            return False
        try:
            _send(worker.channel, request, [*fds, conn.fileno()])
        except OSError:  # it died: `_reap` collects it, the run forks cold
            self.worker = worker
            return False
        worker.channel.close()
        self.children[worker.pid] = worker.reserve
        return True

    def _fork_cold(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
        """No worker: a child of the helper itself runs it (modules imported, no kernel yet)."""
        pid = os.fork()
        if pid == 0:
            try:
                self._in_child()
                run_child(conn, request, fds)  # never returns
            finally:
                os._exit(1)
        self.children[pid] = None

    def _prefork(self) -> Worker | None:
        reserve = Reserve.start(self.spares)
        scratch = self.spares / f"warm-up-{time.monotonic_ns()}"
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:
            try:
                self._in_child()
                ours.close()
                run_worker(theirs, reserve, scratch)  # never returns
            finally:
                os._exit(1)
        theirs.close()
        if reserve is not None:  # the worker owns its pipes now
            for stream in (reserve.process.stdin, reserve.process.stdout):
                with contextlib.suppress(OSError):
                    stream.close()  # type: ignore[union-attr]
        return Worker(pid, ours, reserve, scratch)

    def _in_child(self) -> None:
        """What a forked child must not keep of the helper."""
        self.listener.close()
        _LOCK.close()  # the helper's lock is not a run's to hold
        if self.worker is not None:
            self.worker.channel.close()

    def _reap(self) -> None:
        for pid in list(self.children):
            with contextlib.suppress(ChildProcessError):
                done, _ = os.waitpid(pid, os.WNOHANG)
                if not done:
                    continue
            reserve = self.children.pop(pid)
            if reserve is not None:
                self.orphans[reserve] = time.monotonic()
        if self.worker is not None and _ended(self.worker.pid):  # it never got a run
            self.failures += 1
            self.worker.channel.close()
            shutil.rmtree(self.worker.scratch, ignore_errors=True)
            if self.worker.reserve is not None:
                self._drop(self.worker.reserve)
            self.worker = None
        for reserve, since in list(self.orphans.items()):
            if not reserve.alive() or time.monotonic() - since > 10:  # its run ended: it must go
                self._drop(reserve)
                del self.orphans[reserve]
        # the next worker warms up once no run is under way: on a small machine it would slow one
        if self.worker is None and not self.children and self.failures < 3:
            self.worker = self._prefork()

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
        if self.worker is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker.pid, signal.SIGTERM)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.worker.pid, 0)
            if self.worker.reserve is not None:
                self.orphans[self.worker.reserve] = 0.0
        for reserve in self.orphans:
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
            "ready": self.worker is not None and self.worker.ready,
        }


def _ended(pid: int) -> bool:
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done != 0


# the worker: warm up, then wait for a run ------------------------------------------------------
def run_worker(channel: socket.socket, reserve: Reserve | None, scratch: Path) -> None:
    """Killed while it waits or warms up, its folder is the helper's to remove (under `spares`)."""
    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
        signal.signal(signum, signal.SIG_DFL)
    try:
        _warm_up(reserve, scratch)
        channel.send(b"r")
        request, fds = _receive(channel, 4)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        os._exit(1)
    channel.close()
    run_child(socket.socket(fileno=fds[3]), request, fds[:3], scratch=scratch)


def _warm_up(reserve: Reserve | None, scratch: Path) -> None:
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


# the child: one run, as a cold `investigate` would do it ----------------------------------------
def run_child(
    conn: socket.socket, request: dict[str, Any], fds: list[int], scratch: Path | None = None
) -> None:
    code = 1
    try:
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        request = {**request, **_run_request(conn)}
        _take_terminal(fds, request["env"])
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        time.tzset()
        sys.argv = ["investigate", *request["argv"]]
        conn.settimeout(None)
        _reply(conn, {"pid": os.getpid()})
        _clock(request)
        threading.Thread(target=_stop_when_gone, args=(conn,), daemon=True).start()
        code = _run_cli()
    except BaseException as exc:  # the run's own errors are handled by the CLI; this is the helper's
        with contextlib.suppress(Exception):
            print(
                f"investigate: the warm helper could not run this ({type(exc).__name__}: {exc}); "
                "INVESTIGATOR_WARM=0 runs without it",
                file=sys.stderr,
            )
    finally:
        try:  # nothing may take this process back into the helper's code: it always exits here
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # the client may go once it has the code
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            if scratch is not None:
                shutil.rmtree(scratch, ignore_errors=True)
            with contextlib.suppress(Exception):
                _reply(conn, {"exit": code})
        finally:
            os._exit(code)


def _clock(request: dict[str, Any]) -> None:
    """The run's stats start when the client began, as a cold command's start at its own."""
    from investigator.front import cli

    try:
        waited = max(0.0, time.time() - float(request.get("started", time.time())))
    except (TypeError, ValueError):
        waited = 0.0
    cli.program_started = time.monotonic() - min(waited, 60.0)


def _stop_when_gone(conn: socket.socket) -> None:
    """The client sends nothing after its request: the connection ending means it was killed.
    Stop as Ctrl-C would (the run keeps its checkpoints: `investigate resume`), rather than go on
    writing to a terminal nobody waits on."""
    with contextlib.suppress(OSError):
        if conn.recv(1) == b"":
            os.kill(os.getpid(), signal.SIGINT)


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
def _receive(conn: socket.socket, most: int = 3) -> tuple[dict[str, Any], list[int]]:
    head, fds, _, _ = socket.recv_fds(conn, _HEADER, most)
    try:
        return _message(conn, head), list(fds)
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise


def _message(conn: socket.socket, head: bytes) -> dict[str, Any]:
    """A JSON object of the length `head` gives, read from `conn`."""
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
    return request


def _run_request(conn: socket.socket) -> dict[str, Any]:
    """The run's own part of the request (arguments, folder, environment), which the client sent
    after the part the helper routes by: read here, by the run's process, never by the helper."""
    conn.settimeout(10)
    head = b""
    while len(head) < _HEADER:
        chunk = conn.recv(_HEADER - len(head))
        if not chunk:
            raise ValueError("request cut short")
        head += chunk
    return _message(conn, head)


def _send(conn: socket.socket, message: dict[str, Any], fds: list[int]) -> None:
    """A request as the client sends it: its length with the descriptors, then the JSON."""
    body = json.dumps(message).encode()
    socket.send_fds(conn, [struct.pack("!Q", len(body))], fds)
    conn.sendall(body)


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
    from investigator.terminal import library_logs
    from sandbox.hardening import no_dumps

    no_dumps()
    library_logs()  # before anything imported configures the root logger with a stream of its own
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
    helper = Helper(args.folder, args.key, args.idle, listener)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        helper.serve()
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener.close()
        helper.close()


if __name__ == "__main__":
    main()
