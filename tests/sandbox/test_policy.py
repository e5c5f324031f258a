"""The server's policy belongs to the server: the operator's flags are ceilings a client may lower,
never raise, over stdio and over HTTP; no secret of the server's environment reaches a local kernel."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from investigator.errors import KernelError
from investigator.kernels.mcp import McpKernel
from sandbox.kernels.local import clean_env

from .conftest import (
    error_text,
    http_client,
    http_server,
    in_memory,
    needs_docker,
    server_params,
    structured,
)

# what a client asks for beyond the default ceilings -> the flag that would raise the limit
ABOVE = [
    ({"memory": "64g"}, "--max-memory"),
    ({"cpus": 8}, "--max-cpus"),
    ({"pids": 100_000}, "--max-pids"),
    ({"network": True}, "--allow-network"),
    ({"image": "attacker/kernel:latest"}, "--allow-image"),
]
BELOW = {"memory": "1g", "cpus": 0.5, "pids": 128, "network": False}


async def _refuses_raises_and_allows_lowering(c: Any, backend: str) -> None:
    other = "docker" if backend == "local" else "local"
    pinned = await c.call_tool("create_session", {"backend": other})
    assert pinned.is_error and f"--backend {backend}" in error_text(pinned), error_text(pinned)
    for asked, flag in ABOVE:
        refused = await c.call_tool("create_session", asked)
        assert refused.is_error and flag in error_text(refused), (asked, error_text(refused))
    if backend == "local":  # lowering needs no daemon on a local server
        made = structured(await c.call_tool("create_session", {"backend": backend, **BELOW}))
        assert made["backend"] == backend
        await c.call_tool("cleanup", {"session_id": made["session_id"]})


@pytest.mark.anyio
async def test_a_stdio_client_cannot_raise_the_limits_or_switch_backend() -> None:
    async with Client(server_params("local")) as c:
        await _refuses_raises_and_allows_lowering(c, "local")


@pytest.mark.anyio
async def test_a_docker_server_never_gives_a_local_kernel() -> None:
    """Refused before any kernel is made: this needs no daemon."""
    async with in_memory("docker") as c:
        await _refuses_raises_and_allows_lowering(c, "docker")


@pytest.mark.anyio
async def test_the_operator_raises_the_limits_with_flags() -> None:
    flags = ["--max-memory", "4g", "--max-cpus", "2", "--max-pids", "512", "--allow-network"]
    flags += ["--allow-image", "other/kernel:1"]
    async with Client(server_params("local", args=flags)) as c:
        asked = {"memory": "3g", "cpus": 2, "pids": 512, "network": True, "image": "other/kernel:1"}
        made = structured(await c.call_tool("create_session", asked))
        await c.call_tool("cleanup", {"session_id": made["session_id"]})
        refused = await c.call_tool("create_session", {"memory": "5g"})
        assert refused.is_error and "4g" in error_text(refused)


@pytest.mark.anyio
async def test_an_http_client_cannot_raise_the_limits_or_switch_backend(tmp_path: Path) -> None:
    with http_server(tmp_path, "--backend", "local") as (url, _, _):
        async with http_client(url) as c:
            await _refuses_raises_and_allows_lowering(c, "local")
    with http_server(tmp_path, "--backend", "docker") as (url, _, _):
        async with http_client(url) as c:
            await _refuses_raises_and_allows_lowering(c, "docker")


def test_mcp_kernel_over_http_gets_no_local_kernel_from_a_docker_server(tmp_path: Path) -> None:
    with http_server(tmp_path, "--backend", "docker") as (url, _, _):
        k = McpKernel(url=url, token="test-token-123", backend="local", retries=0)
        with pytest.raises(KernelError, match="--backend docker"):
            k.start()


@needs_docker
@pytest.mark.docker
@pytest.mark.anyio
async def test_lowered_limits_apply_in_the_container() -> None:
    async with Client(server_params("docker")) as c:
        made = structured(await c.call_tool("create_session", {"memory": "256m", "cpus": 0.5, "pids": 64}))
        sid = made["session_id"]
        probe = (
            "import os\n"
            "def first(*paths):\n"
            "    return next(open(p).read().strip() for p in paths if os.path.exists(p))\n"
            "print(first('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'),\n"
            "      first('/sys/fs/cgroup/pids.max', '/sys/fs/cgroup/pids/pids.max'))"
        )
        ran = structured(await c.call_tool("execute", {"session_id": sid, "code": probe}))
        assert ran["ok"], ran
        assert ran["stdout"].split() == [str(256 * 2**20), "64"]
        await c.call_tool("cleanup", {"session_id": sid})


@needs_docker
@pytest.mark.docker
@pytest.mark.anyio
async def test_an_absent_image_is_an_error_and_never_pulled() -> None:
    import docker

    from sandbox.kernels.docker import docker_client

    absent = "investigator-sandbox-absent:never"
    client = docker_client()
    async with Client(server_params("docker", args=["--allow-image", absent])) as c:
        refused = await c.call_tool("create_session", {"image": absent})
    assert refused.is_error and "never pulls" in error_text(refused), error_text(refused)
    with pytest.raises(docker.errors.ImageNotFound):
        client.images.get(absent)


def test_allow_host_answers_a_named_host_and_binding_wide_warns(tmp_path: Path) -> None:
    args = ["--host", "0.0.0.0", "--allow-host", "sandbox.example"]
    with http_server(tmp_path, *args, stderr=subprocess.PIPE) as (url, port, proc):
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
        headers = {
            "Accept": "application/json, text/event-stream",
            "Content-Type": "application/json",
            "Authorization": "Bearer test-token-123",
        }
        named = httpx.post(url, json=hello, headers={**headers, "Host": f"sandbox.example:{port}"})
        assert named.status_code == 200
        other = httpx.post(url, json=hello, headers={**headers, "Host": f"evil.example:{port}"})
        assert other.status_code == 421
        proc.terminate()
        assert proc.stderr is not None
        err = proc.stderr.read().decode()
        proc.stderr.close()
    assert "warning: binding 0.0.0.0 beyond loopback" in err and "sandbox.example" in err


SECRETS = {
    "DATABASE_URL": "postgres://u:hunter2@db/prod",
    "MYSQL_PWD": "mysql-never-inside",
    "GITHUB_PAT": "ghp_never_inside",
    "SALES_DSN": "dsn-never-inside",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.example/never-inside",
}


def test_clean_env_is_an_allowlist(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    env = clean_env("/sandbox/root")
    assert not set(SECRETS) & set(env)
    assert env["LC_ALL"] == "C.UTF-8" and env["PYTHONPATH"].split(":")[0] == "/sandbox/root"


@pytest.mark.anyio
async def test_no_secret_of_the_servers_environment_reaches_a_local_kernel() -> None:
    async with Client(server_params("local", extra_env=SECRETS)) as c:
        sid = structured(await c.call_tool("create_session", {}))["session_id"]
        code = "import json, os; print(json.dumps(dict(os.environ)))"
        ran = structured(await c.call_tool("execute", {"session_id": sid, "code": code}))
        await c.call_tool("cleanup", {"session_id": sid})
    env = json.loads(ran["stdout"])
    assert not set(SECRETS) & set(env)
    assert not any(v in val for v in SECRETS.values() for val in env.values())


def test_a_server_leaves_no_temp_folder_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose sessions all name their workspace (as the CLI's do) never needs its own temp
    folder; one that made it removes it at exit."""
    import tempfile

    from sandbox.sessions import SessionRegistry

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    registry = SessionRegistry("local")
    registry.close_all()
    assert list(tmp_path.iterdir()) == []
    used = SessionRegistry("local")
    assert used.root.parent == tmp_path and used.root.is_dir()
    used.close_all()
    assert list(tmp_path.iterdir()) == []
