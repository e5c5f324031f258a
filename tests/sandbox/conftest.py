"""Sandbox test fixtures: real kernels, real MCP client sessions, a real Docker daemon when one runs.

The tool contracts and the policy are tested through the MCP SDK's in-memory transport to the server
built in this process (`in_memory`, `in_memory_kernel`): the same server, tools, schemas and policy
as `python -m sandbox`, without a child process's start per test. The transports themselves keep
real round trips: every tool over stdio (test_tools.py), the flags and the server's environment over
stdio (test_policy.py), and HTTP end to end (test_transports.py, test_server_limits.py).

Docker tests skip (saying why) only when no daemon answers or the image is not built; run
`.ci/docker-setup.sh` to get both.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from collections.abc import AsyncIterator, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, cast

import pytest
from mcp import Client, StdioServerParameters

from investigator.kernels.mcp import McpKernel
from sandbox.server import build_server
from tests.net import free_port

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "docker: needs a Docker daemon and the sandbox image")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`-m docker` selects every Docker test, the docker half of the parametrized ones too."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and callspec.params.get("backend") == "docker":
            item.add_marker("docker")


def _docker_problem() -> str | None:
    with warnings.catch_warnings():
        # a daemon that refuses us leaves the SDK's socket to the collector: collected here, not as
        # an unraisable warning in whichever test runs next
        warnings.simplefilter("ignore", ResourceWarning)
        problem = _ask_docker()
        gc.collect()
    return problem


def _ask_docker() -> str | None:
    try:
        from sandbox.kernels.docker import DEFAULT_IMAGE, docker_client

        client = docker_client()
    except Exception as exc:
        return f"no Docker daemon could be reached ({type(exc).__name__}); run .ci/docker-setup.sh"
    try:
        client.images.get(DEFAULT_IMAGE)
    except Exception:
        return f"Docker runs but image {DEFAULT_IMAGE} is not built; run .ci/docker-setup.sh"
    return None


DOCKER_PROBLEM = _docker_problem()
needs_docker = pytest.mark.skipif(DOCKER_PROBLEM is not None, reason=DOCKER_PROBLEM or "")
BACKENDS = [
    pytest.param("local", id="local"),
    pytest.param("docker", id="docker", marks=needs_docker),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


Backend = Literal["local", "docker"]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    return cast(Backend, request.param)


def server_params(
    backend: str, extra_env: dict[str, str] | None = None, args: Sequence[str] = ()
) -> StdioServerParameters:
    """`python -m sandbox` as a stdio child, as an MCP client would start it."""
    private = {k: v for k, v in os.environ.items() if k == "INVESTIGATOR_PRIVATE_DIR"}  # not the user's own
    env = {"PYTHONPATH": str(ROOT), **private, **(extra_env or {})}
    return StdioServerParameters(
        command=sys.executable, args=["-m", "sandbox", "--backend", backend, *args], env=env
    )


@contextlib.contextmanager
def http_server(
    cwd: Path, *args: str, token: str = "test-token-123", stderr: Any = subprocess.DEVNULL
) -> Iterator[tuple[str, int, subprocess.Popen[bytes]]]:
    """`python -m sandbox --transport http` on a free port with `args`: (url, port, process),
    once the port answers; stopped with SIGTERM afterwards."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--transport", "http", "--port", str(port), *args],
        env=child_env(INVESTIGATOR_SANDBOX_TOKEN=token),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield f"http://127.0.0.1:{port}/mcp", port, proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


@contextlib.asynccontextmanager
async def http_client(url: str, token: str = "test-token-123", mode: str = "auto") -> Any:
    """An MCP client session over streamable HTTP with the bearer token; `mode="legacy"` speaks
    the handshake protocol (an MCP session, ended with a DELETE), else the stateless one."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=None)
    )
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


@contextlib.asynccontextmanager
async def in_memory(backend: Backend = "local") -> AsyncIterator[Client]:
    """An MCP client session to the sandbox server built in this process, over the SDK's in-memory
    transport, with the default ceilings `python -m sandbox --backend BACKEND` has over stdio."""
    server, registry = build_server(backend)
    try:
        async with Client(server) as client:
            yield client
    finally:
        registry.close_all()


@contextlib.contextmanager
def in_memory_kernel(backend: Backend, workdir: Path, **options: Any) -> Iterator[McpKernel]:
    """A started `McpKernel` whose MCP session reaches the sandbox server built in this process
    (in memory), closed afterwards with the server's sessions."""
    server, registry = build_server(backend)
    k = McpKernel(backend=backend, workdir=workdir, transport=lambda: server, **options)
    try:
        k.start()
        yield k
    finally:
        k.shutdown()
        registry.close_all()


@pytest.fixture
def kernel(backend: Backend, tmp_path: Path) -> Iterator[McpKernel]:
    """A started `McpKernel` on a fresh workspace, closed afterwards."""
    with in_memory_kernel(backend, tmp_path / "ws", memory="1g") as k:
        yield k


def structured(result: Any) -> dict[str, Any]:
    """The structured result a sandbox tool answered with (its own result model, as JSON)."""
    assert not result.is_error and result.structured_content is not None, result
    return dict(result.structured_content)


def error_text(result: Any) -> str:
    """The one line a refused tool call answered with."""
    assert result.is_error, result
    return " ".join(c.text for c in result.content if c.type == "text")


def secret_env() -> dict[str, str]:
    return {"OPENAI_API_KEY": "sk-test-never-inside", "WAREHOUSE_PASSWORD": "hunter2-never-inside"}


def child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}
