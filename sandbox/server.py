"""The sandbox as an MCP server: sessions of a persistent kernel, one tool per operation.

Every tool returns its own result model (`sandbox.models`), so the server publishes an output
schema per tool and a client validates the structured content against it. A tool that cannot do
what it was asked (unknown session, no network, a path outside the workspace, a kernel that will
not start) answers with `isError` and one line saying why; the server keeps running. Generated code
that fails is an `execute` result with `isError` too: the traceback in its text, and the full
result (with `error`) as its structured content.
"""

from __future__ import annotations

import base64
import functools
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

from sandbox import safe_files
from sandbox.models import (
    Closed,
    ExecResult,
    FileContent,
    FileList,
    Installed,
    Restarted,
    SessionInfo,
    Uploaded,
)
from sandbox.policy import Policy
from sandbox.sessions import PACKAGES_DIR, Session, SessionOptions, SessionRegistry

__all__ = ["build_server"]

log = logging.getLogger("sandbox")
R = TypeVar("R")
MAX_TRANSFER = 64 * 2**20  # bytes per upload or download


def _tool(fn: Callable[..., R]) -> Callable[..., R]:
    """Any failure of a tool body becomes a `ToolError`: the client gets `isError` and one line."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> R:
        try:
            return fn(*args, **kwargs)
        except ToolError:
            raise
        except Exception as exc:
            reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            raise ToolError(f"{type(exc).__name__}: {reason}") from exc

    return wrapper


def _session_info(registry: SessionRegistry, s: Session, **extra: Any) -> SessionInfo:
    """What a client learns about a session it made or reset."""
    return SessionInfo(
        session_id=s.id,
        backend=registry.policy.backend,
        workspace=str(s.workdir),
        workspace_in_kernel=s.kernel.workspace_path,
        data_paths=s.data,
        warnings=s.warnings,
        **extra,
    )


def _version() -> str:
    """The installed package's version, as MCP clients see it in the server's info."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("investigator")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


def _exec_result(res: ExecResult) -> CallToolResult:
    """MCP hosts and model clients key on `isError`: a failed execution says so, the traceback
    readable in the text and the structured result alongside for clients that want it."""
    text = res.text()
    if res.error is not None and res.error.traceback:
        text = f"{text}\n{_plain(res.error.traceback)}".strip()
    return CallToolResult(
        content=[TextContent(type="text", text=text or "(no output)")],
        structured_content=res.model_dump(mode="json"),
        is_error=not res.ok,
    )


def _mcp_session(ctx: Context) -> str | None:
    """The MCP session a tool call came in (streamable HTTP's `mcp-session-id`); None over stdio,
    where the client's session is the whole server process."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def close_idle_sessions(registry: SessionRegistry) -> threading.Event:
    """Close sessions left unused past the policy's idle timeout, checking a few times per timeout
    in a background thread (a client that went away never calls cleanup). Set the event to stop."""
    stop = threading.Event()
    idle = registry.policy.idle_timeout_s
    if idle is None:
        return stop

    def sweep() -> None:
        while not stop.wait(min(max(idle / 4, 0.5), 30.0)):
            closed = registry.close_idle()
            if closed:
                log.info("closed idle sessions: %s", ", ".join(closed))

    threading.Thread(target=sweep, name="idle-sessions", daemon=True).start()
    return stop


def _plain(traceback: list[str] | str) -> str:
    """A Jupyter traceback without its terminal colour codes."""
    import re

    lines = traceback if isinstance(traceback, list) else [traceback]
    return re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(lines))


def build_server(
    backend: Literal["local", "docker"] = "local",
    root: Path | None = None,
    confine: bool = False,
    data_roots: list[Path] | None = None,
    warm: dict[Path, Any] | None = None,
    policy: Policy | None = None,
) -> tuple[MCPServer, SessionRegistry]:
    """The MCP server and the session registry behind it. The caller closes the registry when
    it stops serving (not per connection: HTTP clients share it). `policy` holds the operator's
    ceilings (the backend among them); without one, `backend` with the safe defaults."""
    policy = policy or Policy(backend=backend)
    registry = SessionRegistry(
        policy.backend, root, confine=confine, data_roots=data_roots, warm=warm, policy=policy
    )
    mcp = MCPServer(
        "investigator-sandbox",
        version=_version(),
        instructions=(
            "A persistent Python (Jupyter) kernel per session. create_session first, then execute "
            "code; variables persist between calls. Images and long outputs are saved as "
            "workspace files and referenced by name."
        ),
        log_level="WARNING",
    )

    @mcp.tool()
    @_tool
    def create_session(
        backend: Literal["local", "docker"] | None = None,
        image: str | None = None,
        memory: str | None = None,
        cpus: float | None = None,
        timeout: float = 120.0,
        network: bool = False,
        workspace: str | None = None,
        data_paths: list[str] | None = None,
        pids: int | None = None,
        ctx: Context | None = None,
    ) -> SessionInfo:
        """Start a kernel session. `data_paths` are host files made readable inside (read-only);
        the answer's `data_paths` says where. `network` is off unless asked for. The server's
        operator sets the backend and the ceilings of network, image, memory, cpus and pids: a
        session may ask for less (unset means the server's value), never more; `backend`, if
        given, must be the server's own. The operator also limits how many sessions run at once
        (more are refused), closes a session left unused past an idle timeout, and caps
        `timeout` (the default seconds per execution). A session ends with `cleanup`, or with the
        MCP session that made it."""
        options = SessionOptions(
            backend=backend,
            image=image,
            memory=memory,
            cpus=cpus,
            pids=pids,
            timeout=timeout,
            network=network,
            workspace=workspace,
            data_paths=data_paths or [],
        )
        s = registry.create(options, owner=_mcp_session(ctx) if ctx is not None else None)
        return _session_info(registry, s, restored=s.restored, swept_orphans=registry.swept)

    @mcp.tool()
    @_tool
    def reset_session(session_id: str, workspace: str, data_paths: list[str] | None = None) -> SessionInfo:
        """Reuse a local session's kernel for a new task: its namespace emptied, `workspace` its
        folder from now on, the library preloaded again. Much faster than a new session; a Docker
        session cannot be moved (create a new one)."""
        return _session_info(registry, registry.reset(session_id, workspace, data_paths or []))

    @mcp.tool()
    @_tool
    def execute(
        session_id: str, code: str, timeout: float | None = None
    ) -> Annotated[CallToolResult, ExecResult]:
        """Run code in the session's kernel. Returns stdout, stderr, the last expression's repr,
        the error (name, value, traceback), structured results, saved figures and elapsed time.
        Code that raised, timed out or killed its kernel is a tool error (`isError`, the traceback
        in the text) that still carries the full result. `timeout` (seconds; the session's by
        default) is at most the server's ceiling: a longer one is cut to it."""
        s = registry.get(session_id)
        return _exec_result(s.execute(code, registry.policy.timeout(timeout, s.options.timeout)))

    @mcp.tool()
    @_tool
    def install_package(session_id: str, package: str, index: bool = True) -> Installed:
        """pip-install a package into the session's workspace (only if the session has network,
        or from a wheel already uploaded to the workspace with index=False)."""
        s = registry.get(session_id)
        if index and not s.options.network:
            raise PermissionError(
                "this session has no network; create one with network=true to install packages"
            )
        target = f"{s.kernel.workspace_path}/{PACKAGES_DIR}"
        pip = ["-m", "pip", "install", "--quiet", "--target", target]
        pip += ([] if index else ["--no-index"]) + [package]
        code = (
            "import importlib as _il, subprocess as _sp, sys as _sys\n"
            f"_r = _sp.run([_sys.executable, *{pip!r}], capture_output=True, text=True)\n"
            "print(_r.stdout[-4000:]); print(_r.stderr[-4000:], file=_sys.stderr)\n"
            "_il.invalidate_caches()\n"
            "assert _r.returncode == 0, f'pip exited with {_r.returncode}'\n"
        )
        res = s.execute(code, timeout=600)
        if not res.ok:
            raise RuntimeError(f"pip could not install {package}: {res.stderr.strip()[-1000:]}")
        return Installed(package=package, stdout=res.stdout)

    @mcp.tool()
    @_tool
    def upload_file(
        session_id: str, name: str, content_base64: str | None = None, text: str | None = None
    ) -> Uploaded:
        """Write a file into the session workspace (give `text` or `content_base64`)."""
        s = registry.get(session_id)
        if (content_base64 is None) == (text is None):
            raise ValueError("give exactly one of text or content_base64")
        raw = text.encode() if text is not None else base64.b64decode(content_base64 or "")
        if len(raw) > MAX_TRANSFER:
            raise ValueError(f"file too large ({len(raw):,} bytes; at most {MAX_TRANSFER:,})")
        rel = safe_files.write_replacing(s.workdir, s.relative(name), raw)  # never through a link
        inside = f"{s.kernel.workspace_path}/{rel}"
        return Uploaded(name=name, path_in_kernel=inside, bytes=len(raw))

    @mcp.tool()
    @_tool
    def list_files(session_id: str) -> FileList:
        """The workspace's files (hidden bookkeeping folders excluded), with sizes. Links are not
        listed: the kernel may have planted them, pointing anywhere."""
        return FileList(files=registry.get(session_id).kernel.file_sizes())

    @mcp.tool()
    @_tool
    def download_file(session_id: str, name: str) -> FileContent:
        """A workspace file's content: `text` when it is UTF-8, else `content_base64`. A link (or
        a name that goes through one) is refused."""
        s = registry.get(session_id)
        try:
            raw = safe_files.read_regular(s.workdir, s.relative(name), MAX_TRANSFER)
        except FileNotFoundError:
            raise FileNotFoundError(f"no file {name!r} in the workspace; see list_files") from None
        try:
            return FileContent(name=name, bytes=len(raw), text=raw.decode())
        except UnicodeDecodeError:
            return FileContent(name=name, bytes=len(raw), content_base64=base64.b64encode(raw).decode())

    @mcp.tool()
    @_tool
    def restart(session_id: str) -> Restarted:
        """Restart the kernel; saved DataFrames are reloaded from the workspace."""
        return Restarted(restored=registry.get(session_id).restart())

    @mcp.tool()
    @_tool
    def cleanup(session_id: str) -> Closed:
        """Stop the session's kernel and remove its container (and its workspace if the server
        made it)."""
        registry.close(session_id)
        return Closed(session_id=session_id)

    return mcp, registry
