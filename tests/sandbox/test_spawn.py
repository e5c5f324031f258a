"""A local server spawned before the host imports the MCP SDK serves the run's session and is
reaped when the session ends; one the run does not need is stopped."""

from __future__ import annotations

from pathlib import Path

from investigator.kernels.mcp import McpKernel
from investigator.kernels.spawn import INHERITED_ENV, spawn_server, stop_server


def test_a_server_spawned_ahead_serves_the_session_and_is_reaped(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    process = spawn_server(workspace)
    kernel = McpKernel("local", workdir=workspace, process=process, retries=0)
    try:
        kernel.start()
        assert kernel.workspace == str(workspace.resolve())
        result = kernel.execute("print(type(movement).__name__)")  # its warm kernel, library loaded
        assert result.ok and result.stdout.strip() == "function"
    finally:
        kernel.shutdown()
    assert process.returncode is not None  # ended with its input, and waited for


def test_a_spawned_server_the_run_does_not_need_is_stopped(tmp_path: Path) -> None:
    process = spawn_server(tmp_path / "ws")
    stop_server(process)
    assert process.returncode is not None


def test_the_server_gets_the_sdks_own_short_environment() -> None:
    from mcp.client.stdio import DEFAULT_INHERITED_ENV_VARS

    assert tuple(DEFAULT_INHERITED_ENV_VARS) == INHERITED_ENV
