"""A persistent IPython kernel in a local subprocess, driven with `jupyter_client`.

`execute_interactive` waits forever without a timeout, raises without interrupting with one, and
does not notice a dead kernel; so this reads the IOPub channel itself with a deadline, interrupts a
runaway cell (keeping the kernel's state) and restarts a kernel that died.
"""

from __future__ import annotations

import os
import queue
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from jupyter_client.manager import KernelManager

from ..models import ExecError, ExecResult

MIME = "application/vnd.investigator+json"
_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
POLL_S = 0.2


def clean_env(extra_path: str | None = None) -> dict[str, str]:
    """The host environment minus anything that looks like a secret (API keys never enter)."""
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k) and not k.startswith("OPENAI")}
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = "Agg"
    return env


class LocalKernel:
    """One kernel process; `execute` returns an `ExecResult` and never raises for user code."""

    def __init__(self, workdir: Path, startup_timeout: float = 60.0) -> None:
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.startup_timeout = startup_timeout
        self.km: KernelManager | None = None
        self.kc: Any = None

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        project_root = str(Path(__file__).resolve().parents[2])
        # IPC sockets inside a private runtime folder: nothing listens on the network
        runtime = Path(tempfile.mkdtemp(prefix="investigator-kernel-"))
        self.km = KernelManager(
            kernel_name="python3", transport="ipc", ip=str(runtime / "k"),
            connection_file=str(runtime / "connection.json"),
        )
        self.km.start_kernel(
            cwd=str(self.workdir), env=clean_env(project_root), extra_arguments=["--HistoryManager.enabled=False"]
        )
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=self.startup_timeout)

    def shutdown(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None and self.km.has_kernel:
            self.km.shutdown_kernel(now=True)
        self.km = self.kc = None

    def restart(self) -> None:
        self.shutdown()
        self.start()

    def alive(self) -> bool:
        return bool(self.km is not None and self.km.is_alive())

    def __enter__(self) -> LocalKernel:
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
        out, err = [], []
        deadline = started + timeout
        interrupted_at: float | None = None
        while True:
            now = time.monotonic()
            if interrupted_at is None and now > deadline:
                self.km.interrupt_kernel()
                res.timed_out, interrupted_at = True, now
            if interrupted_at is not None and now - interrupted_at > 10:
                self.restart()  # the interrupt did not take: the kernel is wedged
                res.restarted = True
                break
            try:
                msg = self.kc.get_iopub_msg(timeout=POLL_S)
            except queue.Empty:
                if not self.km.is_alive():
                    self.restart()
                    res.restarted = True
                    break
                continue
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                (out if content["name"] == "stdout" else err).append(content["text"])
            elif kind in ("display_data", "execute_result", "update_display_data"):
                data = content.get("data", {})
                if MIME in data:
                    res.data.append(data[MIME])
                elif kind == "execute_result":
                    res.result = data.get("text/plain")
                elif "image/png" in data:
                    res.displays.append(self._save_png(data["image/png"]))
                elif "text/plain" in data:
                    res.displays.append(data["text/plain"])
            elif kind == "error":
                res.error = ExecError(
                    name=content["ename"],
                    value=content["evalue"],
                    traceback=[_ANSI.sub("", line) for line in content.get("traceback", [])],
                )
            elif kind == "status" and content["execution_state"] == "idle":
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

    # workspace -------------------------------------------------------------------------------
    def _snapshot(self) -> dict[str, float]:
        return {
            str(p.relative_to(self.workdir)): p.stat().st_mtime
            for p in self.workdir.rglob("*")
            if p.is_file()
        }

    def _changed(self, before: dict[str, float]) -> list[str]:
        after = self._snapshot()
        return sorted(k for k, v in after.items() if before.get(k) != v)

    def _save_png(self, b64: str) -> str:
        import base64  # noqa: PLC0415

        name = f"figure_{int(time.time() * 1000)}.png"
        (self.workdir / name).write_bytes(base64.b64decode(b64))
        return f"[image saved as {name}]"

    def list_files(self) -> list[str]:
        return sorted(self._snapshot())

    def data_path(self, host_path: str) -> str:
        return str(Path(host_path).resolve())
