"""The warm helper: modules imported once, and a worker forked ahead of each run that has already
run one small investigation through its own sandbox server.

    python -m investigator.front.helper --folder DIR --key KEY [--idle SECONDS]

Started by `investigate` (`client.start_helper`), never by hand: the front door's module hands
`main` the command line a run executes (`Command`) and what to import ahead, so this package
imports nothing of the front doors. One helper per key: it holds an
exclusive lock on `KEY.lock` for its whole life, so a second one started in a race exits at once.
A run goes to the waiting worker; when there is none (two runs at once), to a child forked cold.
The next worker warms up once no run is under way. Its environment is the short list
`client.HELPER_ENV`: a run's secrets reach only that run's process.

The fork rule: a fork copies only the thread that calls it, and a lock another thread held stays
locked in the child forever. So the helper never starts a thread (sandbox servers are plain
subprocesses; the worker, which does start threads, never forks), and `fork` checks it: with
another thread alive it refuses, says so in the helper's log, and the run goes on cold in the
client's own process. (Native pools below Python, OpenBLAS's and jemalloc's, reset themselves in
the child with their own fork handlers.)
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import os
import select
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from investigator.warm import wire
from investigator.warm.child import Command, run_child, run_worker
from investigator.warm.warmup import Reserve, preload

__all__ = ["ForkRefused", "Helper", "fork", "main"]


class ForkRefused(RuntimeError):
    """Another thread is alive: a child forked now could inherit a lock nobody will release."""


def fork() -> int:
    """`os.fork()`, once no thread but this one is alive (else ForkRefused)."""
    others = [t.name for t in threading.enumerate() if t is not threading.current_thread()]
    if others:
        raise ForkRefused(
            f"not forking with {len(others)} other thread(s) alive ({', '.join(others)}): the child "
            "could inherit a lock that one holds; this run goes on cold in the client's process"
        )
    return os.fork()


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
    """Listens on `listener`, keeps one worker warming or ready, hands it each run and reaps what
    ended. `lock` is held for the helper's life (no forked child keeps it)."""

    folder: Path
    key: str
    idle_s: float
    listener: socket.socket
    lock: IO[str] | None = None
    spares: Path = field(init=False)
    worker: Worker | None = None
    children: dict[int, Reserve | None] = field(default_factory=dict)  # runs under way
    orphans: dict[Reserve, float] = field(default_factory=dict)  # used reserves whose run ended
    failures: int = 0  # workers that died (or were refused) before a run: after three, runs fork cold
    served: int = 0
    started: float = field(default_factory=time.time)
    command: Command | None = None  # what a run executes: the command line, in its own process

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
                if not self.handle(conn):
                    return
            finally:
                conn.close()

    def handle(self, conn: socket.socket) -> bool:
        """One request; False to stop serving."""
        if not wire.same_user(conn):
            return True
        conn.settimeout(10)
        try:
            request, fds = wire.receive(conn, 3)
        except (OSError, ValueError):
            return True
        try:
            op = request.get("op")
            if op == "ping":
                wire.answer(conn, self._about())
            elif op == "stop":
                wire.answer(conn, {"stopping": True})
                return False
            elif op == "run" and len(fds) == 3:
                went = self._hand_over(conn, request, fds) or self._fork_cold(conn, request, fds)
                self.served += went
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
            wire.send(worker.channel, request, [*fds, conn.fileno()])
        except OSError:  # it died: `_reap` collects it, the run forks cold
            self.worker = worker
            return False
        worker.channel.close()
        self.children[worker.pid] = worker.reserve
        return True

    def _fork_cold(self, conn: socket.socket, request: dict[str, Any], fds: list[int]) -> bool:
        """No worker: a child of the helper itself runs it (modules imported, no kernel yet). Refused
        a fork, the helper answers without a pid (False): the client runs it in its own process."""
        try:
            pid = fork()
        except (ForkRefused, OSError) as refused:
            _say(refused)
            with contextlib.suppress(OSError):
                wire.answer(conn, {"refused": str(refused)})
            return False
        if pid == 0:
            try:
                self._in_child()
                run_child(conn, request, fds, self.command)
            finally:
                os._exit(1)
        self.children[pid] = None
        return True

    def _prefork(self) -> Worker | None:
        reserve = Reserve.start(self.spares)
        scratch = self.spares / f"warm-up-{time.monotonic_ns()}"
        ours, theirs = socket.socketpair()
        try:
            pid = fork()
        except (ForkRefused, OSError) as refused:
            _say(refused)
            self.failures += 1
            ours.close()
            theirs.close()
            if reserve is not None:
                reserve.stop()
            return None
        if pid == 0:
            try:
                self._in_child()
                ours.close()
                run_worker(theirs, reserve, scratch, self.command)
            finally:
                os._exit(1)
        theirs.close()
        if reserve is not None:
            reserve.let_go()
        return Worker(pid, ours, reserve, scratch)

    def _in_child(self) -> None:
        """What a forked child must not keep of the helper."""
        self.listener.close()
        if self.lock is not None:
            self.lock.close()  # the helper's lock is not a run's to hold
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
                self.worker.reserve.stop()
            self.worker = None
        for reserve, since in list(self.orphans.items()):
            if not reserve.alive() or time.monotonic() - since > 10:  # its run ended: it must go
                reserve.stop()
                del self.orphans[reserve]
        # the next worker warms up once no run is under way: on a small machine it would slow one
        if self.worker is None and not self.children and self.failures < 3:
            self.worker = self._prefork()

    def close(self) -> None:
        if self.worker is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker.pid, signal.SIGTERM)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.worker.pid, 0)
            if self.worker.reserve is not None:
                self.orphans[self.worker.reserve] = 0.0
        for reserve in self.orphans:
            reserve.stop()
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


def _say(problem: BaseException) -> None:
    """A line in the helper's log (its stderr)."""
    with contextlib.suppress(Exception):
        print(f"investigator warm helper: {problem}", file=sys.stderr, flush=True)


def main(argv: list[str] | None, command: Command, imports: Callable[[], None] = lambda: None) -> None:
    """Serve runs of `command` until idle or stopped; `imports` loads what runs need beyond
    `warmup.preload`'s (the caller's own modules)."""
    parser = argparse.ArgumentParser(prog="investigate (warm helper)")
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--idle", type=float, default=900.0)
    args = parser.parse_args(argv)
    lock = open(args.folder / f"{args.key}.lock", "w")  # noqa: SIM115  # held for the helper's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another helper for this key is already up
    from investigator.terminal import library_logs
    from sandbox.hardening import no_dumps

    no_dumps()
    library_logs()  # before anything imported configures the root logger with a stream of its own
    preload()
    imports()
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
    helper = Helper(args.folder, args.key, args.idle, listener, lock, command=command)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        helper.serve()
    finally:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        listener.close()
        helper.close()
