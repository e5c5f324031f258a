"""`McpKernel`: the `Kernel` the agent uses, reached only through an MCP client session.

Every answer is validated against the tool's own result model (`sandbox.models`), the same model
the server publishes as the tool's output schema.

By default it starts `python -m sandbox --backend local|docker` as a child over stdio, so the same
code path runs whatever the backend; it can also connect to a server over streamable HTTP. The MCP
client is async; this object is synchronous, driving it from an event loop in a background thread
(an anyio blocking portal). A lost connection is retried with backoff (a new server and session on
the same workspace, which reloads the saved DataFrames); after that it raises `KernelError`.
"""

from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

import anyio
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from pydantic import BaseModel

from investigator.errors import KernelError
from investigator.kernels.spawn import SERVER_COMMAND, errlog, reap, server_command, server_env
from sandbox.models import Closed, ExecError, ExecResult, FileList, Restarted, SessionInfo, Uploaded

__all__ = ["SERVER_COMMAND", "McpKernel", "ToolFailed", "server_command", "server_env"]

M = TypeVar("M", bound=BaseModel)

UPLOAD_MAX = 64 * 2**20


class ToolFailed(Exception):
    """The server answered with `isError`: the request was understood and refused."""


class McpKernel:
    """A persistent kernel behind the sandbox MCP server. Implements `investigator.run.seams.Kernel`."""

    def __init__(
        self,
        backend: Literal["local", "docker"] = "local",
        workdir: Path | None = None,
        data_files: Sequence[str | Path] = (),
        image: str | None = None,
        memory: str = "2g",
        cpus: float = 1.0,
        network: bool = False,
        timeout: float = 120.0,
        retries: int = 3,
        backoff_s: float = 1.0,
        url: str | None = None,
        token: str | None = None,
        server_command: Sequence[str] | None = None,
        transport: Callable[[], Any] | None = None,
        process: subprocess.Popen[bytes] | None = None,
        cancelled: threading.Event | None = None,
    ) -> None:
        self.backend = backend
        self.workdir = Path(workdir).resolve() if workdir else None
        self.data_files = [str(Path(p).resolve()) for p in data_files]
        self.options = {
            "backend": backend,
            "image": image,
            "memory": memory,
            "cpus": cpus,
            "network": network,
            "timeout": timeout,
        }
        self.timeout = timeout
        self.retries, self.backoff_s = retries, backoff_s
        self.url, self.token = url, token
        self.server_command = list(server_command or SERVER_COMMAND)
        self.transport = transport  # a server already started (the warm helper's), used once
        self.process = process  # a server this process spawned ahead (`kernels.spawn`), reaped here
        if process is not None:
            self.transport = _pipes(process)
        self.cancelled = cancelled  # set: the run was refused while this started; no retry, no new server
        self.session_id: str | None = None
        self.workspace: str | None = None
        self.data: dict[str, str] = {}
        self._portal_cm: Any = None
        self._portal: BlockingPortal | None = None
        self._client: Client | None = None
        self._stop: anyio.Event | None = None
        self._task: Any = None
        self._restored: list[str] = []

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Connect and create a session, retrying a failed connection with backoff. Idempotent."""
        if self.session_id is not None:
            return
        last: Exception | None = None
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                self._connect()
                self._create_session()
                return
            except ToolFailed as exc:  # the server said no: retrying would say no again
                self._disconnect()
                raise KernelError(f"the sandbox refused to start a {self.backend} session: {exc}") from exc
            except Exception as exc:
                last = exc
                self._disconnect()
                if self.cancelled is not None and self.cancelled.is_set():
                    raise KernelError("the run was refused while its sandbox started") from exc
        where = self.url or " ".join(self.server_command)
        raise KernelError(
            f"could not reach the sandbox MCP server ({where}, backend {self.backend}) after "
            f"{self.retries + 1} attempts: {type(last).__name__}: {last}. Check that the server "
            "starts on its own (`python -m sandbox --backend ...`), and for docker that the daemon "
            "runs and the image is built (.ci/docker-setup.sh)."
        ) from last

    def shutdown(self) -> None:
        if self.session_id is not None and self._client is not None:
            with contextlib.suppress(Exception):
                self._call("cleanup", {"session_id": self.session_id}, Closed, timeout=60)
        self.session_id = None
        self._disconnect()

    def reuse(self, workdir: Path, data_files: Sequence[str | Path] = ()) -> None:
        """Make this started kernel ready for a new task in `workdir`: a local session is reset in
        place (same process, empty namespace); a Docker one, whose mounts are fixed, is replaced by
        a new session on the same server. Raises `KernelError` if neither works."""
        self.workdir = Path(workdir).resolve()
        self.data_files = [str(Path(p).resolve()) for p in data_files]
        try:
            if self.backend != "local" or self.session_id is None:
                raise ToolFailed("a new session is needed")
            info = self._call(
                "reset_session",
                {
                    "session_id": self.session_id,
                    "workspace": str(self.workdir),
                    "data_paths": self.data_files,
                },
                SessionInfo,
                timeout=120,
            )
            self.workspace, self._restored = info.workspace, []
            self.data = {str(Path(k).resolve()): v for k, v in info.data_paths.items()}
        except ToolFailed:
            if self.session_id is not None:
                with contextlib.suppress(Exception):
                    self._call("cleanup", {"session_id": self.session_id}, Closed, timeout=60)
            self.session_id = None
            try:
                self._create_session()
            except Exception as exc:
                raise KernelError(f"could not start a new sandbox session: {exc}") from exc
        except Exception as exc:
            raise KernelError(f"lost the sandbox server: {type(exc).__name__}: {exc}") from exc

    def restart(self) -> list[str]:
        """Restart the kernel; returns the DataFrames reloaded from the workspace."""
        return self._call_retrying("restart", {}, Restarted, timeout=300).restored

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # the Kernel protocol ---------------------------------------------------------------------
    def execute(self, code: str, timeout: float = 60.0) -> ExecResult:
        try:
            return self._call(
                "execute",
                {"session_id": self.session_id, "code": code, "timeout": timeout},
                ExecResult,
                timeout=timeout + 180,
            )
        except ToolFailed as exc:
            raise KernelError(f"the sandbox could not execute code: {exc}") from exc
        except Exception as exc:
            self._reconnect(exc)
            return ExecResult(
                ok=False,
                restarted=True,
                restored=self._restored,
                error=ExecError(
                    name="SandboxRestarted",
                    value=f"the sandbox server was lost ({type(exc).__name__}) and "
                    "restarted; this code did not finish",
                ),
            )

    def list_files(self) -> list[str]:
        return sorted(self._call_retrying("list_files", {}, FileList, timeout=60).files)

    def data_path(self, host_path: str) -> str:
        """Where a host file is readable inside the kernel: its mount if it was declared in
        `data_files`, the file itself for a local server, else a copy uploaded to the workspace."""
        key = str(Path(host_path).resolve())
        if key in self.data:
            return self.data[key]
        if self.backend == "local" and self.url is None:
            return key
        path = Path(key)
        if not path.is_file() or path.stat().st_size > UPLOAD_MAX:
            raise KernelError(
                f"{host_path} is not a file of at most {UPLOAD_MAX // 2**20} MiB; "
                "pass large data files as McpKernel(data_files=[...]) to mount them"
            )
        up = self._call_retrying(
            "upload_file",
            {
                "name": f"data/{path.name}",
                "content_base64": base64.b64encode(path.read_bytes()).decode(),
            },
            Uploaded,
            timeout=120,
        )
        self.data[key] = up.path_in_kernel
        return self.data[key]

    # MCP plumbing ----------------------------------------------------------------------------
    def _server(self) -> Any:
        if self.transport is not None:  # once: a lost server is replaced by one of our own
            transport, self.transport = self.transport, None
            return transport()
        if self.url:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            url = self.url

            @contextlib.asynccontextmanager
            async def http_transport() -> Any:  # the SDK leaves a client it was given open: closed here
                http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None))
                async with http, streamable_http_client(url, http_client=http) as streams:
                    yield streams

            return http_transport()
        cmd = server_command(self.server_command, self.backend, self.workdir)
        params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=server_env())
        return stdio_client(params, errlog=errlog())

    async def _serve(self, *, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
        """Hold the client open in one task (anyio wants it entered and left in the same task)."""
        self._stop = anyio.Event()
        async with Client(self._server()) as client:
            self._client = client
            task_status.started()
            await self._stop.wait()

    def _connect(self) -> None:
        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._task, _ = self._portal.start_task(self._serve)

    def _disconnect(self) -> None:
        portal, stop = self._portal, self._stop
        if portal is not None:
            if stop is not None:
                with contextlib.suppress(Exception):
                    portal.call(stop.set)
            if self._task is not None:
                with contextlib.suppress(Exception):
                    self._task.result(timeout=60)
            with contextlib.suppress(Exception):
                self._portal_cm.__exit__(None, None, None)
        self._portal = self._portal_cm = self._client = self._stop = self._task = None
        if self.process is not None and self.transport is None:  # its pipes were used: it is ending
            reap(self.process)
            self.process = None

    def _create_session(self) -> None:
        args: dict[str, Any] = {**self.options, "data_paths": self.data_files}
        if self.workdir is not None:
            args["workspace"] = str(self.workdir)
        info = self._call("create_session", args, SessionInfo, timeout=300)
        self.session_id, self.workspace = info.session_id, info.workspace
        self.data = {str(Path(k).resolve()): v for k, v in info.data_paths.items()}
        self._restored = info.restored

    def _call(self, tool: str, args: dict[str, Any], model: type[M], timeout: float) -> M:
        if self._portal is None or self._client is None:
            raise ConnectionError("not connected to the sandbox server")
        client = self._client

        async def call() -> Any:
            return await client.call_tool(tool, args, read_timeout_seconds=timeout)

        result = self._portal.call(call)
        if result.is_error and result.structured_content is not None:  # e.g. code that raised
            return model.model_validate(result.structured_content)
        if result.is_error:
            text = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
            raise ToolFailed(text or "tool failed")
        return model.model_validate(result.structured_content)

    def _call_retrying(self, tool: str, args: dict[str, Any], model: type[M], timeout: float) -> M:
        """A session tool call; a lost server is replaced once (with backoff) before giving up."""
        try:
            return self._call(tool, {"session_id": self.session_id, **args}, model, timeout)
        except ToolFailed as exc:
            raise KernelError(f"sandbox tool {tool} failed: {exc}") from exc
        except Exception as exc:
            self._reconnect(exc)
            return self._call(tool, {"session_id": self.session_id, **args}, model, timeout)

    def _reconnect(self, cause: Exception) -> None:
        self._disconnect()
        self.session_id = None
        try:
            self.start()
        except KernelError as exc:
            raise KernelError(
                f"lost the sandbox server ({type(cause).__name__}: {cause}) and could not get it back: {exc}"
            ) from exc


def _pipes(process: subprocess.Popen[bytes]) -> Callable[[], Any]:
    """The MCP transport over a spawned server's pipes; the transport owns (and closes) them."""
    from investigator.kernels.pipes import pipe_transport

    assert process.stdout is not None and process.stdin is not None
    read_fd, write_fd = os.dup(process.stdout.fileno()), os.dup(process.stdin.fileno())
    process.stdout.close()
    process.stdin.close()
    return partial(pipe_transport, read_fd, write_fd)
