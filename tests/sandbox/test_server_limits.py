"""An HTTP sandbox server bounds what its clients hold: how many sessions at once, how long one
sits unused, how long one execution runs; and a client's sessions end with its MCP session.
Over the real streamable-HTTP transport with the official MCP client."""

from __future__ import annotations

import time
from pathlib import Path

import anyio
import pytest

from .conftest import error_text, http_client, http_server, structured

pytestmark = pytest.mark.anyio


async def test_sessions_beyond_the_limit_are_refused_and_one_closed_makes_room(tmp_path: Path) -> None:
    with http_server(tmp_path, "--root", str(tmp_path / "root"), "--max-sessions", "2") as (url, _, _):
        async with http_client(url) as client:
            made = [structured(await client.call_tool("create_session", {}))["session_id"] for _ in range(2)]
            refused = error_text(await client.call_tool("create_session", {}))
            assert "already runs 2 sessions" in refused and "--max-sessions" in refused
            structured(await client.call_tool("cleanup", {"session_id": made[0]}))
            structured(await client.call_tool("create_session", {}))


async def test_an_execution_asking_for_more_time_gets_the_ceiling(tmp_path: Path) -> None:
    with http_server(tmp_path, "--root", str(tmp_path / "root"), "--max-timeout", "2") as (url, _, _):
        async with http_client(url) as client:
            sid = structured(await client.call_tool("create_session", {"timeout": 3600}))["session_id"]
            started = time.monotonic()
            ran = await client.call_tool(
                "execute", {"session_id": sid, "code": "import time; time.sleep(30)", "timeout": 3600}
            )
            assert time.monotonic() - started < 20
            assert ran.is_error and ran.structured_content is not None
            assert ran.structured_content["timed_out"] is True
            assert "exceeded 2s" in ran.structured_content["error"]["value"]
            kept = await client.call_tool("execute", {"session_id": sid, "code": "print('still here')"})
            assert structured(kept)["stdout"] == "still here\n"  # interrupted, not killed


async def test_a_session_left_unused_is_closed_with_its_kernel(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with http_server(tmp_path, "--root", str(root), "--idle-timeout", "2") as (url, _, _):
        async with http_client(url) as client:
            info = structured(await client.call_tool("create_session", {}))
            workspace = Path(info["workspace"])
            assert workspace.is_dir()
            deadline = time.monotonic() + 30
            while workspace.exists() and time.monotonic() < deadline:
                await anyio.sleep(0.5)
            assert not workspace.exists(), "the idle session's workspace is still there"
            sid = info["session_id"]
            gone = error_text(await client.call_tool("execute", {"session_id": sid, "code": "1"}))
            assert "closed by the server" in gone and "--idle-timeout" in gone


async def test_a_clients_sessions_end_with_its_mcp_session(tmp_path: Path) -> None:
    # a client that ends its MCP session (the official client's DELETE on exit) and never called
    # cleanup left its kernels running until the server stopped. (The stateless protocol has no
    # MCP session: there, the idle timeout is what reclaims a gone client's sessions.)
    root = tmp_path / "root"
    with http_server(tmp_path, "--root", str(root)) as (url, _, _):
        async with http_client(url, mode="legacy") as client:
            info = structured(await client.call_tool("create_session", {}))
            structured(await client.call_tool("execute", {"session_id": info["session_id"], "code": "x = 1"}))
        workspace = Path(info["workspace"])
        deadline = time.monotonic() + 30
        while workspace.exists() and time.monotonic() < deadline:
            await anyio.sleep(0.2)
        assert not workspace.exists(), "the ended MCP session's kernel session is still open"
        async with http_client(url) as other:
            sid = info["session_id"]
            gone = error_text(await other.call_tool("execute", {"session_id": sid, "code": "x"}))
            assert "the MCP session that made it ended" in gone
