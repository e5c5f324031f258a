"""The sandbox as an MCP server: sessions of a persistent kernel, one tool per operation.

Every tool returns a `ToolResult` (success, summary, data) as structured content and as JSON text.
A tool that cannot do what it was asked (unknown session, no network, a path outside the
workspace, a kernel that will not start) returns it with `isError`; the server keeps running.
Generated code failing is not a tool error: `execute` reports it in `data.error`.
"""

from __future__ import annotations

import base64
import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

from sandbox.models import ToolResult
from sandbox.sessions import PACKAGES_DIR, SessionOptions, SessionRegistry

__all__ = ["build_server"]

log = logging.getLogger("sandbox")
MAX_TRANSFER = 64 * 2**20  # bytes per upload or download


def _reply(result: ToolResult, error: bool = False) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=result.model_dump_json())],
        structured_content=result.model_dump(mode="json"),
        is_error=error,
    )


def _tool(fn: Callable[..., ToolResult]) -> Callable[..., CallToolResult]:
    """Turn a tool body into a result; any exception becomes an `isError` result with its reason."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> CallToolResult:
        try:
            return _reply(fn(*args, **kwargs))
        except Exception as exc:
            log.info("tool %s failed: %r", fn.__name__, exc)
            reason = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
            return _reply(ToolResult(success=False, summary=f"{type(exc).__name__}: {reason}"), True)

    wrapper.__annotations__["return"] = CallToolResult
    return wrapper


def build_server(
    backend: Literal["local", "docker"] = "local",
    root: Path | None = None,
    confine: bool = False,
    data_roots: list[Path] | None = None,
    warm: dict[Path, Any] | None = None,
) -> tuple[MCPServer, SessionRegistry]:
    """The MCP server and the session registry behind it. The caller closes the registry when
    it stops serving (not per connection: HTTP clients share it)."""
    registry = SessionRegistry(backend, root, confine=confine, data_roots=data_roots, warm=warm)
    mcp = MCPServer(
        "investigator-sandbox",
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
        memory: str = "2g",
        cpus: float = 1.0,
        timeout: float = 120.0,
        network: bool = False,
        workspace: str | None = None,
        data_paths: list[str] | None = None,
    ) -> ToolResult:
        """Start a kernel session. `data_paths` are host files made readable inside (read-only);
        `data.data_paths` says where. `network` is off unless asked for."""
        options = SessionOptions(
            backend=backend or registry.default_backend,
            image=image,
            memory=memory,
            cpus=cpus,
            timeout=timeout,
            network=network,
            workspace=workspace,
            data_paths=data_paths or [],
        )
        s = registry.create(options)
        return ToolResult(
            success=True,
            summary=f"session {s.id} started ({options.backend})",
            data={
                "session_id": s.id,
                "backend": options.backend,
                "workspace": str(s.workdir),
                "workspace_in_kernel": s.kernel.workspace_path,
                "data_paths": s.data,
                "warnings": s.warnings,
                "restored": s.restored,
                "swept_orphans": registry.swept,
            },
        )

    @mcp.tool()
    @_tool
    def execute(session_id: str, code: str, timeout: float | None = None) -> ToolResult:
        """Run code in the session's kernel. Returns stdout, stderr, the last expression's repr,
        the error (name, value, traceback), structured results, saved figures and elapsed time."""
        res = registry.get(session_id).execute(code, timeout)
        summary = "ok" if res.ok else f"{res.error.name}: {res.error.value}" if res.error else "error"
        if res.restarted:
            summary += f"; kernel restarted, DataFrames restored: {', '.join(res.restored) or 'none'}"
        return ToolResult(success=res.ok, summary=summary[:500], data=res.model_dump(mode="json"))

    @mcp.tool()
    @_tool
    def install_package(session_id: str, package: str, index: bool = True) -> ToolResult:
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
        return ToolResult(success=True, summary=f"installed {package}", data={"stdout": res.stdout})

    @mcp.tool()
    @_tool
    def upload_file(
        session_id: str, name: str, content_base64: str | None = None, text: str | None = None
    ) -> ToolResult:
        """Write a file into the session workspace (give `text` or `content_base64`)."""
        s = registry.get(session_id)
        if (content_base64 is None) == (text is None):
            raise ValueError("give exactly one of text or content_base64")
        raw = text.encode() if text is not None else base64.b64decode(content_base64 or "")
        if len(raw) > MAX_TRANSFER:
            raise ValueError(f"file too large ({len(raw):,} bytes; at most {MAX_TRANSFER:,})")
        path = s.resolve(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(raw)
        path.chmod(0o644)
        inside = f"{s.kernel.workspace_path}/{path.relative_to(s.workdir.resolve())}"
        return ToolResult(
            success=True,
            summary=f"wrote {name} ({len(raw):,} bytes)",
            data={"name": name, "path_in_kernel": inside, "bytes": len(raw)},
        )

    @mcp.tool()
    @_tool
    def list_files(session_id: str) -> ToolResult:
        """The workspace's files (hidden bookkeeping folders excluded), with sizes."""
        s = registry.get(session_id)
        files = {f: (s.workdir / f).stat().st_size for f in s.kernel.list_files()}
        return ToolResult(success=True, summary=f"{len(files)} files", data={"files": files})

    @mcp.tool()
    @_tool
    def download_file(session_id: str, name: str) -> ToolResult:
        """A workspace file's content: `text` when it is UTF-8, else `content_base64`."""
        path = registry.get(session_id).resolve(name)
        if not path.is_file():
            raise FileNotFoundError(f"no file {name!r} in the workspace; see list_files")
        raw = path.read_bytes()
        if len(raw) > MAX_TRANSFER:
            raise ValueError(f"file too large ({len(raw):,} bytes; at most {MAX_TRANSFER:,})")
        data: dict[str, Any] = {"name": name, "bytes": len(raw)}
        try:
            data["text"] = raw.decode()
        except UnicodeDecodeError:
            data["content_base64"] = base64.b64encode(raw).decode()
        return ToolResult(success=True, summary=f"{name} ({len(raw):,} bytes)", data=data)

    @mcp.tool()
    @_tool
    def restart(session_id: str) -> ToolResult:
        """Restart the kernel; saved DataFrames are reloaded from the workspace."""
        restored = registry.get(session_id).restart()
        return ToolResult(
            success=True,
            summary=f"restarted; DataFrames restored: {', '.join(restored) or 'none'}",
            data={"restored": restored},
        )

    @mcp.tool()
    @_tool
    def cleanup(session_id: str) -> ToolResult:
        """Stop the session's kernel and remove its container (and its workspace if the server
        made it)."""
        registry.close(session_id)
        return ToolResult(success=True, summary=f"session {session_id} closed")

    return mcp, registry
