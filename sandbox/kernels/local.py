"""A persistent IPython kernel in a local subprocess, driven with `jupyter_client`.

No isolation beyond an environment of a few allowed host variables (no secrets): this is the
embedded default for development and tests. The execute loop (deadline, interrupt, restart of a
dead kernel) lives in `jupyter.py`.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from jupyter_client.manager import KernelManager

from sandbox.kernel_guard import LIFELINE, RUNTIME_PREFIX
from sandbox.kernels.jupyter import INLINE, JupyterKernel
from sandbox.private import HIDE, private_dir

__all__ = ["PASSED", "LocalKernel", "clean_env"]

# What a kernel needs from the host environment; nothing else passes (an allowlist: a secret's
# name cannot be guessed by a pattern -- DATABASE_URL, MYSQL_PWD, *_PAT, *_DSN, webhook URLs).
PASSED = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "LANG",
        "LANGUAGE",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "MPLCONFIGDIR",
        "XDG_CACHE_HOME",
        "XDG_CONFIG_HOME",
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
    }
)
PROJECT_ROOT = Path(__file__).resolve().parents[2]


def clean_env(extra_path: str | None = None) -> dict[str, str]:
    """The few host variables a kernel needs (`PASSED`, `LC_*`), `PYTHONPATH` with the sandbox's
    `extra_path` first, and the inline figure backend. Nothing else of the host's environment."""
    env = {k: v for k, v in os.environ.items() if k in PASSED or k.startswith("LC_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (extra_path, os.environ.get("PYTHONPATH")) if p)
    if not env["PYTHONPATH"]:
        del env["PYTHONPATH"]
    env["MPLBACKEND"] = INLINE  # figures come back as PNG displays
    return env


@functools.cache
def own_pid_namespace() -> list[str]:
    """The command prefix that starts the kernel in its own user, PID and mount namespaces with a
    private /proc, so kernel code sees no other process — not the CLI's or the server's or the
    user's shell's `/proc/<pid>/environ` (API keys) or command line (a database URL) — and, from
    a user namespace, may read no other process's memory or environment even were one visible.
    The guard then drops every capability (`kernel_guard.py`), root's too: nothing inside can
    unmount that /proc. Root whose machine allows no user namespaces keeps the PID namespace and
    the dropped capabilities. [] where the machine allows neither (no `unshare`): the kernel then
    runs as a plain subprocess."""
    unshare = shutil.which("unshare")
    if unshare is None or not sys.platform.startswith("linux"):
        return []
    isolate = ["--pid", "--fork", "--kill-child", "--mount-proc"]
    tries = [[unshare, "--user", "--map-root-user", *isolate]]  # the caller's own id is root inside
    if os.geteuid() == 0:
        tries.append([unshare, *isolate])
    for prefix in tries:
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0:
                return prefix
        except (OSError, subprocess.SubprocessError):
            continue
    return []


class LocalKernel(JupyterKernel):
    """One kernel process; `execute` returns an `ExecResult` and never raises for user code."""

    def __init__(self, workdir: Path, startup_timeout: float = 60.0) -> None:
        super().__init__(workdir)
        self.workspace_path = str(self.workdir.resolve())
        self.startup_timeout = startup_timeout
        self.km: KernelManager | None = None
        self._runtime: Path | None = None
        self._lifeline: int | None = None

    def start(self) -> None:
        if self.kc is not None:  # already running
            return
        # IPC sockets inside a private runtime folder: nothing listens on the network
        self._runtime = Path(tempfile.mkdtemp(prefix=RUNTIME_PREFIX))
        try:
            self._start_in(self._runtime)
        except BaseException:
            self.shutdown()  # a kernel that never answered leaves no process or folder behind
            raise

    def _start_in(self, runtime: Path) -> None:
        self.km = KernelManager(
            kernel_name="python3",
            transport="ipc",
            ip=str(runtime / "k"),
            connection_file=str(runtime / "connection.json"),
        )
        env = clean_env(str(PROJECT_ROOT))
        isolate, spec = own_pid_namespace(), self.km.kernel_spec
        if isolate and spec is not None:  # interrupts go as messages: a signal would reach `unshare`
            # the guard drops the kernel's privileges and ends it with the server (kernel_guard.py)
            spec.argv = [*isolate, sys.executable, "-m", "sandbox.kernel_guard", "-f", "{connection_file}"]
            lifeline = runtime / "lifeline"
            os.mkfifo(lifeline, 0o600)
            self._lifeline = os.open(lifeline, os.O_RDWR | os.O_NONBLOCK)  # closes when we die
            env[LIFELINE] = str(lifeline)
            env[HIDE] = str(private_dir())  # the guard hides it from kernel code
            spec.interrupt_mode = "message"
        self.km.start_kernel(
            cwd=str(self.workdir),
            env=env,
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
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
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
