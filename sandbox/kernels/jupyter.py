"""The execute loop shared by every backend: a Jupyter kernel client read with a deadline.

`execute_interactive` waits forever without a timeout, raises without interrupting with one, and
does not notice a dead kernel; so this reads the IOPub channel itself with a deadline, interrupts a
runaway cell (keeping the kernel's state) and restarts a kernel that died. Backends say only how
to start, stop, interrupt and check a kernel.
"""

from __future__ import annotations

import base64
import queue
import re
import time
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Self

from pydantic import ValidationError

from investigator.analysis.emit import MIME
from sandbox import safe_files
from sandbox.models import Emitted, ExecError, ExecResult

INLINE = "module://matplotlib_inline.backend_inline"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
POLL_S = 0.2
ALIVE_EVERY_S = 1.0  # how often a quiet kernel is checked for death
WEDGED_S = 10.0  # an interrupt that has not taken by then means the kernel is restarted


class JupyterKernel(ABC):
    """One persistent kernel; `execute` returns an `ExecResult` and never raises for user code.

    The workspace is a host folder in every backend (a bind mount for containers), so files are
    listed and PNGs saved on the host side.
    """

    workspace_path: str  # the workspace as the kernel sees it

    def __init__(self, workdir: Path) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.kc: Any = None

    # what a backend provides -----------------------------------------------------------------
    @abstractmethod
    def start(self) -> None: ...

    @abstractmethod
    def shutdown(self) -> None: ...

    @abstractmethod
    def _interrupt(self) -> None: ...

    @abstractmethod
    def alive(self) -> bool: ...

    def restart(self) -> None:
        self.shutdown()
        self.start()

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # execution -------------------------------------------------------------------------------
    def execute(self, code: str, timeout: float = 60.0) -> ExecResult:
        if self.kc is None:
            self.start()
        before = self._snapshot()
        started = time.monotonic()
        msg_id = self.kc.execute(code, store_history=False, allow_stdin=False)
        res = ExecResult(ok=True)
        out: list[str] = []
        err: list[str] = []
        deadline = started + timeout
        interrupted_at: float | None = None
        checked_at = started
        while True:
            now = time.monotonic()
            if interrupted_at is None and now > deadline:
                self._interrupt()
                res.timed_out, interrupted_at = True, now
            if interrupted_at is not None and now - interrupted_at > WEDGED_S:
                self.restart()  # the interrupt did not take: the kernel is wedged
                res.restarted = True
                break
            try:
                msg = self.kc.get_iopub_msg(timeout=POLL_S)
            except queue.Empty:
                if time.monotonic() - checked_at >= ALIVE_EVERY_S:
                    checked_at = time.monotonic()
                    if not self.alive():
                        self.restart()
                        res.restarted = True
                        break
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if self._handle(msg, res, out, err):
                break
        res.stdout, res.stderr = "".join(out), "".join(err)
        if res.restarted and res.error is None:
            res.error = ExecError(name="KernelDied", value="the kernel died or hung and was restarted")
        if res.timed_out and not res.restarted:
            tb = res.error.traceback if res.error else []
            res.error = ExecError(
                name="TimeoutError",
                value=f"execution exceeded {timeout:.0f}s and was interrupted; variables are kept",
                traceback=tb,
            )
        res.ok = res.error is None
        res.elapsed_s = time.monotonic() - started
        res.files = self._changed(before)
        return res

    def _handle(self, msg: dict[str, Any], res: ExecResult, out: list[str], err: list[str]) -> bool:
        """Fold one IOPub message into `res`; True when the cell is finished."""
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            (out if content["name"] == "stdout" else err).append(content["text"])
        elif kind in ("display_data", "execute_result", "update_display_data"):
            data = content.get("data", {})
            if MIME in data:
                try:
                    res.data.append(Emitted.model_validate(data[MIME]))
                except ValidationError:
                    err.append("[a structured result was not valid JSON of the emit format; dropped]\n")
            elif kind == "execute_result":
                res.result = data.get("text/plain")
            elif "image/png" in data:
                shown, note = self._save_png(data["image/png"])
                res.displays.append(shown)
                if note:
                    err.append(note)
            elif "text/plain" in data:
                res.displays.append(data["text/plain"])
        elif kind == "error":
            res.error = ExecError(
                name=content["ename"],
                value=content["evalue"],
                traceback=[_ANSI.sub("", line) for line in content.get("traceback", [])],
            )
        elif kind == "status" and content["execution_state"] == "idle":
            return True
        return False

    # workspace -------------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, tuple[int, int]]:
        """Visible workspace files -> (mtime, size); hidden folders (.state, .site-packages,
        .kernel) are ours. Links are neither listed nor followed: the kernel can plant them."""
        return {
            name: (st.st_mtime_ns, st.st_size) for name, st in safe_files.file_stats(self.workdir).items()
        }

    def _changed(self, before: dict[str, tuple[int, int]]) -> list[str]:
        after = self._snapshot()
        return sorted(k for k, v in after.items() if before.get(k) != v)

    def _save_png(self, b64: str) -> tuple[str, str | None]:
        """Save a figure as a new workspace file, never through a link (a taken name gets a fresh
        one): the display line naming it, and a note for stderr when a name was a planted link."""
        try:
            name, odd = safe_files.write_fresh(
                self.workdir, f"figure_{time.time_ns() // 1_000_000}.png", base64.b64decode(b64)
            )
        except (OSError, ValueError) as exc:
            return "[image not saved]", f"[sandbox: a figure could not be saved: {exc}]\n"
        if odd:
            note = f"[sandbox: {', '.join(odd)} already in the workspace, left untouched; saved as {name}]\n"
            return f"[image saved as {name}]", note
        return f"[image saved as {name}]", None

    def list_files(self) -> list[str]:
        return sorted(self._snapshot())

    def file_sizes(self) -> dict[str, int]:
        """Visible workspace files -> their own size (a link is not listed)."""
        return {name: size for name, (_, size) in sorted(self._snapshot().items())}
