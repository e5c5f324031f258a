"""Sessions: a kernel, its workspace, its options; output caps and DataFrame persistence.

Every backend gets the same treatment here: the analysis library is preloaded, the DataFrames in
the kernel's namespace are pickled into the workspace after each execution, and a kernel that had
to be restarted gets them back (the result says which).
"""

from __future__ import annotations

import contextlib
import json
import secrets
import shutil
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from sandbox import kernel_side
from sandbox.kernels.jupyter import JupyterKernel
from sandbox.models import Emitted, ExecResult

__all__ = ["Session", "SessionOptions", "SessionRegistry", "cap_text"]

STATE_DIR = ".state"  # pickled DataFrames (hidden from list_files)
PACKAGES_DIR = ".site-packages"  # install_package target
OUTPUTS_DIR = "outputs"  # full text of outputs that were cut
OUTPUT_CAP = 20_000  # characters kept per output field
DATA_CAP = 256_000  # characters of JSON per structured result before it goes to a file
MARKER = ".sandbox-workspace"  # a folder the sandbox made or adopted as a workspace
PERSIST_MAX_BYTES = 512 * 2**20  # larger DataFrames are not persisted
SENTINEL = "__investigator_restored__"


class SessionOptions(BaseModel):
    """How a session's kernel is made. Defaults are the safe ones."""

    backend: Literal["local", "docker"] = "local"
    image: str | None = None
    memory: str = "2g"
    cpus: float = 1.0
    pids: int = 256
    timeout: float = 120.0
    network: bool = False
    workspace: str | None = Field(None, description="host folder to use; a fresh one if absent")
    data_paths: list[str] = Field(default_factory=list, description="host files mounted read-only")


def cap_text(text: str, limit: int, save: Path) -> tuple[str, bool]:
    """Keep the head and tail of a long text with a visible marker; the whole goes to `save`."""
    if len(text) <= limit:
        return text, False
    save.parent.mkdir(parents=True, exist_ok=True)
    save.write_text(text)
    save.chmod(0o644)
    half = limit // 2
    cut = len(text) - 2 * half
    marker = f"\n[... {cut:,} characters cut; the full output is in workspace file {save.name} ...]\n"
    return text[:half] + marker + text[-half:], True


def _preamble(workspace: str) -> str:
    """The kernel-side helpers (`kernel_side.py`, sent as source) and the call that installs them."""
    source = Path(kernel_side.__file__).read_text()
    call = f"install(globals(), {workspace!r}, {PERSIST_MAX_BYTES}, {SENTINEL!r})"
    return f"{source}\n{call}\ndel install\n"


class Session:
    """One kernel and its workspace. Calls are serialised: a kernel runs one cell at a time."""

    def __init__(
        self,
        sid: str,
        options: SessionOptions,
        kernel: JupyterKernel,
        workdir: Path,
        owns_workdir: bool,
        data: dict[str, str],
    ) -> None:
        self.id, self.options, self.kernel, self.workdir = sid, options, kernel, workdir
        self.owns_workdir = owns_workdir
        self.data = data  # host path -> path inside the kernel
        self.lock = threading.Lock()
        self.count = 0
        self.warnings: list[str] = []
        self.restored: list[str] = []  # DataFrames reloaded when the session started

    # setup -----------------------------------------------------------------------------------
    def prepare(self, restore: bool = False) -> list[str]:
        """Preload the library and helpers; with `restore`, reload persisted DataFrames."""
        res = self.kernel.execute(_preamble(self.kernel.workspace_path), timeout=120)
        problem = res.stderr or (f"{res.error.name}: {res.error.value}" if res.error else "")
        if problem:
            self.warnings.append(problem.strip())
        return self._restore() if restore else []

    def _restore(self) -> list[str]:
        res = self.kernel.execute("__investigator_restore()", timeout=300)
        for line in res.stdout.splitlines():
            if line.startswith(SENTINEL):
                return list(json.loads(line[len(SENTINEL) :]))
        return []

    # execution -------------------------------------------------------------------------------
    def execute(self, code: str, timeout: float | None = None) -> ExecResult:
        with self.lock:
            self.count += 1
            res = self.kernel.execute(code, timeout=timeout or self.options.timeout)
            if res.restarted:
                res.restored = self.prepare(restore=True)
            else:
                self.kernel.execute("__investigator_persist()", timeout=120)
            return self._cap(res)

    def restart(self) -> list[str]:
        with self.lock:
            self.kernel.restart()
            return self.prepare(restore=True)

    def _cap(self, res: ExecResult, limit: int = OUTPUT_CAP) -> ExecResult:
        out = self.workdir / OUTPUTS_DIR
        stem = f"exec-{self.count:04d}"
        saved: list[str] = []

        def cap(text: str, what: str) -> str:
            capped, cut = cap_text(text, limit, out / f"{stem}-{what}.txt")
            if cut:
                saved.append(f"{OUTPUTS_DIR}/{stem}-{what}.txt")
            return capped

        res.stdout = cap(res.stdout, "stdout")
        res.stderr = cap(res.stderr, "stderr")
        if res.result is not None:
            res.result = cap(res.result, "result")
        res.displays = [cap(d, f"display{i}") for i, d in enumerate(res.displays)]
        if res.error is not None:
            res.error.value = cap(res.error.value, "error")
            tb = "\n".join(res.error.traceback)
            if len(tb) > limit:
                res.error.traceback = cap(tb, "traceback").splitlines()
        for i, item in enumerate(res.data):
            text = item.model_dump_json()
            if len(text) > DATA_CAP:
                name = f"{OUTPUTS_DIR}/{stem}-data{i}.json"
                cap_text(text, 0, self.workdir / name)
                saved.append(name)
                res.data[i] = Emitted(
                    label=item.label, saved_as=name, note=f"{len(text):,} characters of JSON; read the file"
                )
        res.files = sorted(set(res.files) | set(saved))
        return res

    # workspace -------------------------------------------------------------------------------
    def resolve(self, name: str) -> Path:
        """A workspace file by its relative name; nothing outside the workspace."""
        root = self.workdir.resolve()
        path = (root / name).resolve()
        if not path.is_relative_to(root) or path == root:
            raise ValueError(f"{name!r} is not a file name inside the workspace")
        return path

    def close(self) -> None:
        with self.lock:
            self.kernel.shutdown()
            if self.owns_workdir:
                shutil.rmtree(self.workdir, ignore_errors=True)


class SessionRegistry:
    """The live sessions of one server process, and how kernels are made for them."""

    def __init__(
        self,
        default_backend: Literal["local", "docker"] = "local",
        root: Path | None = None,
        confine: bool = False,
        data_roots: list[Path] | None = None,
        warm: dict[Path, Future[JupyterKernel]] | None = None,
    ) -> None:
        self.default_backend = default_backend
        self.warm = dict(warm or {})  # workspace -> a local kernel started before the first call
        self.owns_root = root is None
        self.root = root or Path(tempfile.mkdtemp(prefix="investigator-sandbox-"))
        self.confine = confine  # remote clients: workspaces under root, data under data_roots
        self.data_roots = [p.resolve() for p in data_roots or []]
        self.sessions: dict[str, Session] = {}
        self._docker: Any = None
        self.swept: list[str] = []

    def docker(self) -> Any:
        """The Docker client, made once; its first use sweeps orphans of crashed runs."""
        if self._docker is None:
            from sandbox.kernels.docker import docker_client, sweep_orphans

            self._docker = docker_client()
            self.swept = sweep_orphans(self._docker)
        return self._docker

    def create(self, options: SessionOptions) -> Session:
        sid = secrets.token_hex(6)
        owns = options.workspace is None
        workdir = Path(options.workspace).resolve() if options.workspace else self.root / sid
        self._check(options, workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / MARKER).touch()
        kernel, data = self._kernel(options, workdir)
        kernel = self._adopt_warm(options, workdir) or kernel
        session = Session(sid, options, kernel, workdir, owns, data)
        try:
            kernel.start()
            session.restored = session.prepare(restore=(workdir / STATE_DIR).is_dir())
        except BaseException:
            session.close()
            raise
        self.sessions[sid] = session
        return session

    def _adopt_warm(self, options: SessionOptions, workdir: Path) -> JupyterKernel | None:
        """The kernel started ahead for this workspace, if any and if it came up."""
        pending = self.warm.pop(workdir.resolve(), None)
        if pending is None:
            return None
        try:
            kernel = pending.result()
        except Exception:  # it failed to start early: the normal start reports the problem
            return None
        if options.backend != "local":
            kernel.shutdown()
            return None
        return kernel

    def _check(self, options: SessionOptions, workdir: Path) -> None:
        """Refuse host paths a session must not take over: a workspace is new, empty or ours
        (it is made writable for the sandbox user), and with `confine` stays under the roots."""
        if workdir.is_dir() and any(workdir.iterdir()) and not (workdir / MARKER).exists():
            raise PermissionError(
                f"workspace {workdir} already holds files the sandbox did not make; "
                "give a new or empty folder"
            )
        if self.confine and not workdir.is_relative_to(self.root.resolve()):
            raise PermissionError(f"workspace must be under {self.root} on this server")
        for p in options.data_paths:
            path = Path(p).resolve()
            if self.confine and not any(path.is_relative_to(r) for r in self.data_roots):
                roots = ", ".join(map(str, self.data_roots)) or "none (start with --data-root)"
                raise PermissionError(f"data file {p} is outside the allowed data roots: {roots}")
            if not path.is_file():
                raise FileNotFoundError(f"data file {p} does not exist on the server's machine")

    def _kernel(self, options: SessionOptions, workdir: Path) -> tuple[JupyterKernel, dict[str, str]]:
        if options.backend == "local":
            from sandbox.kernels.local import LocalKernel

            return LocalKernel(workdir), {p: str(Path(p).resolve()) for p in options.data_paths}
        from sandbox.kernels.docker import DEFAULT_IMAGE, DockerKernel

        mounts: dict[str, str] = {}
        for i, p in enumerate(options.data_paths):
            inside = f"/data/{Path(p).name}"
            if inside in mounts.values():
                inside = f"/data/{i}-{Path(p).name}"
            mounts[p] = inside
        kernel = DockerKernel(
            workdir,
            image=options.image or DEFAULT_IMAGE,
            memory=options.memory,
            cpus=options.cpus,
            pids=options.pids,
            network=options.network,
            mounts=mounts,
            client=self.docker(),
        )
        return kernel, mounts

    def get(self, sid: str) -> Session:
        try:
            return self.sessions[sid]
        except KeyError:
            known = ", ".join(self.sessions) or "none"
            raise KeyError(f"no session {sid!r} (live sessions: {known}); call create_session") from None

    def close(self, sid: str) -> None:
        self.get(sid).close()
        del self.sessions[sid]

    def close_all(self) -> None:
        """At exit: every session, any kernel started ahead but never used, our temp folder."""
        for sid in list(self.sessions):
            with contextlib.suppress(Exception):  # closing everything at exit is best effort
                self.close(sid)
        for pending in self.warm.values():
            with contextlib.suppress(Exception):
                pending.result().shutdown()
        self.warm.clear()
        if self.owns_root:
            shutil.rmtree(self.root, ignore_errors=True)


def prewarm(workdir: Path) -> Future[JupyterKernel]:
    """Start a local kernel for `workdir` and import the analysis library in it, in the background.

    A stdio server knows its first workspace from its command line, so the kernel can come up
    while the server itself is still importing the MCP SDK: the two take about as long.
    """
    from sandbox.kernels.local import LocalKernel

    def start() -> JupyterKernel:
        workdir.mkdir(parents=True, exist_ok=True)
        (workdir / MARKER).touch()
        kernel = LocalKernel(workdir)
        kernel.start()
        kernel.execute(_preamble(kernel.workspace_path), timeout=120)
        return kernel

    pool = ThreadPoolExecutor(1, thread_name_prefix="prewarm")
    future = pool.submit(start)
    pool.shutdown(wait=False)
    return future
