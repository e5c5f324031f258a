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
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

from sandbox import kernel_side, safe_files
from sandbox.kernels.jupyter import JupyterKernel
from sandbox.models import Emitted, ExecResult
from sandbox.policy import Policy, SessionOptions

__all__ = ["Policy", "Session", "SessionOptions", "SessionRegistry", "cut_text"]

STATE_DIR = ".state"  # pickled DataFrames (hidden from list_files)
PACKAGES_DIR = ".site-packages"  # install_package target
OUTPUTS_DIR = "outputs"  # full text of outputs that were cut
OUTPUT_CAP = 20_000  # characters kept per output field
DATA_CAP = 256_000  # characters of JSON per structured result before it goes to a file
MARKER = ".sandbox-workspace"  # a folder the sandbox made or adopted as a workspace
PERSIST_MAX_BYTES = 512 * 2**20  # larger DataFrames are not persisted
SENTINEL = "__investigator_restored__"


def cut_text(text: str, limit: int, saved_as: str | None) -> str:
    """The head and tail of a long text with a visible marker saying where the whole is."""
    half = limit // 2
    cut = len(text) - 2 * half
    where = (
        f"the full output is in workspace file {saved_as}" if saved_as else "the full output was not saved"
    )
    return text[:half] + f"\n[... {cut:,} characters cut; {where} ...]\n" + text[-half:]


# what `Session.rebind` runs in the kernel: nothing of the previous task survives in the namespace.
# `%reset` ends with two full garbage collections, 0.2 s with pandas and Ibis loaded, on the next
# run's critical path; they are skipped (the names are gone all the same, refcounting frees what
# they held, and the collector's own schedule finds any cycle among it later).
_RESET = """\
def __investigator_reset(shell):
    import gc
    collect = gc.collect
    gc.collect = lambda *args, **kwargs: 0
    try:
        shell.run_line_magic("reset", "-f")
    finally:
        gc.collect = collect
__investigator_reset(get_ipython())
import os as _os, sys as _sys
_sys.path[:] = [p for p in _sys.path if not p.endswith("/.site-packages")]
_os.chdir({workspace!r})
del _os, _sys
"""


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
        self.owner: str | None = None  # the MCP session that made it (HTTP), closed with it
        self.used_at = time.monotonic()
        self.closed = False  # a call that was waiting for the lock finds it closed, not restarted
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
            self._open()
            self.count += 1
            res = self.kernel.execute(code, timeout=timeout or self.options.timeout)
            if res.restarted:
                res.restored = self.prepare(restore=True)
            else:
                self.kernel.execute("__investigator_persist()", timeout=120)
            self.used_at = time.monotonic()
            return self._cap(res)

    def _open(self) -> None:
        if self.closed:
            raise KeyError(f"session {self.id!r} was closed; call create_session")

    def restart(self) -> list[str]:
        with self.lock:
            self._open()
            self.kernel.restart()
            return self.prepare(restore=True)

    def rebind(self, workdir: Path, data: dict[str, str]) -> None:
        """Start over in `workdir` with the same kernel process: an empty namespace (`%reset -f`),
        that folder as the current directory and workspace, the library preloaded again. A local
        kernel takes seconds to start and import the library; this, a small fraction of that."""
        with self.lock:
            self._open()
            old, owned = self.workdir, self.owns_workdir
            self.kernel.workdir = self.workdir = workdir
            self.kernel.workspace_path = str(workdir)
            self.data, self.owns_workdir, self.count, self.warnings = data, False, 0, []
            res = self.kernel.execute(_RESET.format(workspace=str(workdir)), timeout=60)
            if not res.ok or res.restarted:
                detail = f"{res.error.name}: {res.error.value}" if res.error else "the kernel restarted"
                raise RuntimeError(f"could not reset the kernel ({detail})")
            self.prepare()
        if owned:
            shutil.rmtree(old, ignore_errors=True)

    def _cap(self, res: ExecResult, limit: int = OUTPUT_CAP) -> ExecResult:
        stem = f"{OUTPUTS_DIR}/exec-{self.count:04d}"
        saved: list[str] = []
        notes: list[str] = []

        def cap(text: str, what: str) -> str:
            if len(text) <= limit:
                return text
            return cut_text(text, limit, self._save(f"{stem}-{what}.txt", text, saved, notes))

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
                name = self._save(f"{stem}-data{i}.json", text, saved, notes)
                size = f"{len(text):,} characters of JSON"
                res.data[i] = Emitted(
                    label=item.label,
                    saved_as=name,
                    note=f"{size}; read the file" if name else f"{size}; too big to send and not saved",
                )
        if notes:
            res.stderr += (
                ("\n" if res.stderr and not res.stderr.endswith("\n") else "") + "\n".join(notes) + "\n"
            )
        res.files = sorted(set(res.files) | set(saved))
        return res

    def _save(self, name: str, text: str, saved: list[str], notes: list[str]) -> str | None:
        """Write `text` to a new workspace file named like `name` (never through a link the kernel
        planted: a taken name gets a fresh one, with a note); the name written, or None."""
        try:
            written, odd = safe_files.write_fresh(self.workdir, name, text.encode())
        except (OSError, ValueError) as exc:
            notes.append(f"[sandbox: the full output could not be saved as {name}: {exc}]")
            return None
        if odd:
            notes.append(
                f"[sandbox: {', '.join(odd)} already in the workspace, left untouched; saved as {written}]"
            )
        saved.append(written)
        return written

    # workspace -------------------------------------------------------------------------------
    def relative(self, name: str) -> str:
        """A workspace file's normalised relative name; nothing outside the workspace. (Links on
        the way are refused when the file is opened: `safe_files` never follows one.)"""
        rel = safe_files.relative_name(name)
        root = self.workdir.resolve()
        path = (root / rel).resolve()
        if not path.is_relative_to(root) or path == root:
            raise ValueError(f"{name!r} is not a file name inside the workspace")
        return rel

    def close(self) -> None:
        with self.lock:
            self.closed = True
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
        policy: Policy | None = None,
    ) -> None:
        # the operator's ceilings; a client's options are checked against them in `create`
        self.policy = policy or Policy(backend=default_backend)
        self.default_backend = self.policy.backend
        self.warm = dict(warm or {})  # workspace -> a local kernel started before the first call
        self.owns_root = root is None
        self._root = root  # our own temp folder is made on first use: most servers never need it
        self.confine = confine  # remote clients: workspaces under root, data under data_roots
        self.data_roots = [p.resolve() for p in data_roots or []]
        self.sessions: dict[str, Session] = {}
        self.ended: dict[str, str] = {}  # session id -> why the server closed it (the last few)
        self._lock = threading.Lock()  # the count of sessions, those still starting included
        self._starting = 0
        self._docker: Any = None
        self.swept: list[str] = []

    @property
    def root(self) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="investigator-sandbox-"))
        return self._root

    def docker(self) -> Any:
        """The Docker client, made once; its first use sweeps orphans of crashed runs."""
        if self._docker is None:
            from sandbox.kernels.docker import docker_client, sweep_orphans

            self._docker = docker_client()
            self.swept = sweep_orphans(self._docker)
        return self._docker

    def create(self, options: SessionOptions, owner: str | None = None) -> Session:
        """A started session; `options` are checked against (and completed from) the policy, and
        refused when the server already runs as many sessions as it may. `owner` is the MCP
        session asking: its end closes this one (`close_owned_by`)."""
        options = self.policy.apply(options)
        with self._lock:
            live, limit = len(self.sessions) + self._starting, self.policy.max_sessions
            if live >= limit:
                raise PermissionError(
                    f"this server already runs {live} sessions, its limit: close one with the cleanup "
                    f"tool (an unused one is closed after the idle timeout), or the operator raises "
                    f"--max-sessions (now {limit})"
                )
            self._starting += 1
        try:
            session = self._start(options)
        finally:
            with self._lock:
                self._starting -= 1
        session.owner = owner
        with self._lock:
            self.sessions[session.id] = session
        return session

    def _start(self, options: SessionOptions) -> Session:
        sid = secrets.token_hex(6)
        owns = options.workspace is None
        workdir = Path(options.workspace).resolve() if options.workspace else self.root / sid
        self._check(options, workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        safe_files.touch(workdir, MARKER)
        kernel, data = self._kernel(options, workdir)
        kernel = self._adopt_warm(options, workdir) or kernel
        session = Session(sid, options, kernel, workdir, owns, data)
        try:
            kernel.start()
            session.restored = session.prepare(restore=(workdir / STATE_DIR).is_dir())
        except BaseException:
            session.close()
            raise
        return session

    def reset(self, sid: str, workspace: str, data_paths: list[str]) -> Session:
        """A live local session, emptied and moved to `workspace` for a new task (see
        `Session.rebind`). A container's workspace and data are mounted when it starts, so a
        Docker session cannot move: the client makes a new one."""
        session = self.get(sid)
        if session.options.backend != "local":
            raise PermissionError("only local sessions can be reset; create a new session")
        options = session.options.model_copy(update={"workspace": workspace, "data_paths": data_paths})
        workdir = Path(workspace).resolve()
        self._check(options, workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        safe_files.touch(workdir, MARKER)
        session.options = options
        session.rebind(workdir, {p: str(Path(p).resolve()) for p in data_paths})
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
        marker = workdir / MARKER
        if workdir.is_dir() and any(workdir.iterdir()) and not (marker.is_file() and not marker.is_symlink()):
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
        from sandbox.kernels.docker import DockerKernel

        mounts: dict[str, str] = {}
        for i, p in enumerate(options.data_paths):
            inside = f"/data/{Path(p).name}"
            if inside in mounts.values():
                inside = f"/data/{i}-{Path(p).name}"
            mounts[p] = inside
        kernel = DockerKernel(
            workdir,
            image=options.image or self.policy.images[0],
            memory=options.memory or self.policy.max_memory,
            cpus=options.cpus or self.policy.max_cpus,
            pids=options.pids or self.policy.max_pids,
            network=options.network,
            mounts=mounts,
            client=self.docker(),
        )
        return kernel, mounts

    def get(self, sid: str) -> Session:
        session = self.sessions.get(sid)
        if session is None:
            if sid in self.ended:
                why = self.ended[sid]
                raise KeyError(f"session {sid!r} was closed by the server: {why}; call create_session")
            known = ", ".join(self.sessions) or "none"
            raise KeyError(f"no session {sid!r} (live sessions: {known}); call create_session")
        session.used_at = time.monotonic()
        return session

    def close(self, sid: str, reason: str | None = None) -> None:
        """Stop a session's kernel (its container) and forget it; `reason` is what a later call
        with its id is told (the server closed it, its client did not)."""
        session = self.get(sid)
        with self._lock:
            self.sessions.pop(sid, None)
            if reason is not None:
                self.ended[sid] = reason
                while len(self.ended) > 100:
                    self.ended.pop(next(iter(self.ended)))
        session.close()

    def close_idle(self) -> list[str]:
        """Close every session unused for longer than the idle timeout (not one that is running
        code: an execution is bounded by the timeout ceiling); the ids closed."""
        idle = self.policy.idle_timeout_s
        if idle is None:
            return []
        now = time.monotonic()
        stale = [s for s in list(self.sessions.values()) if now - s.used_at > idle and not s.lock.locked()]
        for s in stale:
            with contextlib.suppress(Exception):  # one that will not stop must not keep the others
                self.close(s.id, f"unused for more than {idle:g}s (the server's --idle-timeout)")
        return [s.id for s in stale]

    def close_owned_by(self, owner: str) -> list[str]:
        """Close the sessions an MCP session made, now that it has ended; the ids closed."""
        mine = [s for s in list(self.sessions.values()) if s.owner == owner]
        for s in mine:
            with contextlib.suppress(Exception):
                self.close(s.id, "the MCP session that made it ended")
        return [s.id for s in mine]

    def close_all(self) -> None:
        """At exit: every session, any kernel started ahead but never used, our temp folder."""
        for sid in list(self.sessions):
            with contextlib.suppress(Exception):  # closing everything at exit is best effort
                self.close(sid)
        for pending in self.warm.values():
            with contextlib.suppress(Exception):
                pending.result().shutdown()
        self.warm.clear()
        if self.owns_root and self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)


def prewarm(workdir: Path) -> Future[JupyterKernel]:
    """Start a local kernel for `workdir` and import the analysis library in it, in the background.

    A stdio server knows its first workspace from its command line, so the kernel can come up
    while the server itself is still importing the MCP SDK: the two take about as long.
    """
    from sandbox.kernels.local import LocalKernel

    def start() -> JupyterKernel:
        workdir.mkdir(parents=True, exist_ok=True)
        safe_files.touch(workdir, MARKER)
        kernel = LocalKernel(workdir)
        kernel.start()
        kernel.execute(_preamble(kernel.workspace_path), timeout=120)
        return kernel

    pool = ThreadPoolExecutor(1, thread_name_prefix="prewarm")
    future = pool.submit(start)
    pool.shutdown(wait=False)
    return future
