"""A persistent IPython kernel in a local subprocess, driven with `jupyter_client`.

No isolation beyond a secret-free environment: this is the embedded default for development and
tests. The execute loop (deadline, interrupt, restart of a dead kernel) lives in `jupyter.py`.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from jupyter_client.manager import KernelManager

from sandbox.kernels.jupyter import INLINE, JupyterKernel

__all__ = ["LocalKernel", "clean_env"]

_SECRET = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|AUTH)", re.IGNORECASE)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def clean_env(extra_path: str | None = None) -> dict[str, str]:
    """The host environment minus anything that looks like a secret (API keys never enter)."""
    env = {k: v for k, v in os.environ.items() if not _SECRET.search(k) and not k.startswith("OPENAI")}
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, env.get("PYTHONPATH")) if p)
    env["MPLBACKEND"] = INLINE  # figures come back as PNG displays
    return env


class LocalKernel(JupyterKernel):
    """One kernel process; `execute` returns an `ExecResult` and never raises for user code."""

    def __init__(self, workdir: Path, startup_timeout: float = 60.0) -> None:
        super().__init__(workdir)
        self.workspace_path = str(self.workdir.resolve())
        self.startup_timeout = startup_timeout
        self.km: KernelManager | None = None
        self._runtime: Path | None = None

    def start(self) -> None:
        if self.kc is not None:  # already running
            return
        # IPC sockets inside a private runtime folder: nothing listens on the network
        self._runtime = Path(tempfile.mkdtemp(prefix="investigator-kernel-"))
        self.km = KernelManager(
            kernel_name="python3",
            transport="ipc",
            ip=str(self._runtime / "k"),
            connection_file=str(self._runtime / "connection.json"),
        )
        self.km.start_kernel(
            cwd=str(self.workdir),
            env=clean_env(str(PROJECT_ROOT)),
            extra_arguments=["--HistoryManager.enabled=False"],
        )
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=self.startup_timeout)

    def shutdown(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        if self.km is not None and self.km.has_kernel:
            self.km.shutdown_kernel(now=True)
        if self._runtime is not None:
            shutil.rmtree(self._runtime, ignore_errors=True)
        self.km = self.kc = self._runtime = None

    def _interrupt(self) -> None:
        if self.km is not None:
            self.km.interrupt_kernel()

    def alive(self) -> bool:
        return bool(self.km is not None and self.km.is_alive())

    def data_path(self, host_path: str) -> str:
        return str(Path(host_path).resolve())
