"""Kernels kept for the next run in the same process: the notebook API and triage run many
investigations in a row, and a sandbox server, its MCP session and a warm kernel take seconds to
start but a few milliseconds to reset.

A kernel is taken by one run at a time (`take` removes it from the pool) and given back only after
a run that ended well; the pool resets it for the next run (`McpKernel.reuse`: an empty namespace
in the new run's workspace), so nothing of one investigation is visible to the next. Whatever is
idle at exit is shut down.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Sequence
from pathlib import Path

from investigator.kernels.mcp import McpKernel

__all__ = ["POOL", "KernelPool"]


class KernelPool:
    """Idle, started `McpKernel`s by backend, at most `keep` of each."""

    def __init__(self, keep: int = 4) -> None:
        self.keep = keep
        self._idle: dict[str, list[McpKernel]] = {}
        self._lock = threading.Lock()

    def take(self, backend: str, workdir: Path, data_files: Sequence[str | Path]) -> McpKernel | None:
        """An idle kernel of `backend` made ready for a run in `workdir`, or None (make one)."""
        while True:
            with self._lock:
                idle = self._idle.get(backend)
                if not idle:
                    return None
                kernel = idle.pop()
            try:
                if kernel.session_id is None:  # offered, not yet connected
                    kernel.start()
                kernel.reuse(workdir, data_files)
                return kernel
            except Exception:  # a server that died while idle: drop it, try the next
                with contextlib.suppress(Exception):
                    kernel.shutdown()

    def give(self, kernel: McpKernel) -> None:
        """Keep a kernel whose run ended well for the next run; past `keep`, shut it down."""
        with self._lock:
            idle = self._idle.setdefault(kernel.backend, [])
            if kernel not in idle and len(idle) < self.keep and kernel.session_id is not None:
                idle.append(kernel)
                return
        kernel.shutdown()

    def offer(self, kernel: McpKernel) -> None:
        """Add a kernel that may not be connected yet (the warm helper hands one over with its
        server already running); `take` connects it, or drops it if its server is gone."""
        with self._lock:
            self._idle.setdefault(kernel.backend, []).append(kernel)

    def idle(self, backend: str) -> list[McpKernel]:
        """The kernels of `backend` waiting for a run (a copy: to look at, not to use)."""
        with self._lock:
            return list(self._idle.get(backend, []))

    def close(self) -> None:
        """Shut every idle kernel down (at exit, or to free their memory now)."""
        with self._lock:
            kernels = [k for idle in self._idle.values() for k in idle]
            self._idle.clear()
        for kernel in kernels:
            with contextlib.suppress(Exception):
                kernel.shutdown()


POOL = KernelPool()
# before concurrent.futures joins its worker threads at exit: an idle kernel's MCP client runs its
# event loop in one of them, which ends only when the kernel is shut down
threading._register_atexit(POOL.close)  # type: ignore[attr-defined]
