"""The server's two transports and the client's handling of a lost or absent server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from investigator.errors import KernelError
from investigator.kernels.mcp import McpKernel
from sandbox.kernels.local import own_pid_namespace
from tests.net import free_port

from .conftest import child_env


def _rpc(proc: subprocess.Popen[str], msg: dict[str, object]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()


def _answer(proc: subprocess.Popen[str], msg_id: int, seen: list[str]) -> dict[str, object]:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        seen.append(line)
        msg = json.loads(line)  # every line on stdout must be a JSON-RPC message
        if msg.get("id") == msg_id:
            return dict(msg)


def test_stdio_carries_nothing_but_mcp_messages(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--backend", "local", "--log-level", "DEBUG"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=child_env(),
        cwd=tmp_path,
    )
    seen: list[str] = []
    try:
        _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
        )
        _answer(proc, 1, seen)
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "create_session", "arguments": {}},
            },
        )
        made = _answer(proc, 2, seen)
        sid = made["result"]["structuredContent"]["session_id"]  # type: ignore[index]
        noisy = "import os, sys\nos.write(1, b'fd write\\n')\nprint('hello')\nsys.__stdout__.write('x\\n')"
        _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "execute", "arguments": {"session_id": sid, "code": noisy}},
            },
        )
        ran = _answer(proc, 3, seen)
        # the kernel's fd 1 is captured into the result (ipykernel skips that only when it sees
        # PYTEST_CURRENT_TEST, which the kernel's allowlisted environment no longer carries)
        out = ran["result"]["structuredContent"]["stdout"]  # type: ignore[index]
        assert out.replace("fd write\n", "", 1) == "hello\n"  # fd 1 may land mid-line
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(timeout=30)
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in seen)
    assert proc.stdout is not None and proc.stdout.read() == ""  # nothing stray after the answers
    proc.stdout.close()
    proc.stderr.close()  # type: ignore[union-attr]


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    port, token = free_port(), "test-token-123"
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox", "--transport", "http", "--port", str(port)],
        env=child_env(INVESTIGATOR_SANDBOX_TOKEN=token),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.2)
    try:
        yield url, token
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)


def test_http_requires_the_bearer_token_and_a_local_origin(http_server: tuple[str, str]) -> None:
    url, token = http_server
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
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    assert httpx.post(url, json=hello, headers=headers).status_code == 401
    wrong = {**headers, "Authorization": "Bearer not-the-token"}
    assert httpx.post(url, json=hello, headers=wrong).status_code == 401
    authed = {**headers, "Authorization": f"Bearer {token}"}
    evil = {**authed, "Origin": "http://evil.example"}
    assert httpx.post(url, json=hello, headers=evil).status_code == 403
    assert httpx.post(url, json=hello, headers=authed).status_code == 200


def test_http_serves_a_real_session(http_server: tuple[str, str]) -> None:
    url, token = http_server
    with McpKernel(url=url, token=token) as k:
        k.execute("x = 20")
        assert k.execute("x + 22").result == "42"


def test_http_clients_cannot_mount_host_files_or_pick_workspaces(
    http_server: tuple[str, str], tmp_path: Path
) -> None:
    url, token = http_server
    secret = tmp_path / "elsewhere.csv"
    secret.write_text("a\n1\n")
    with pytest.raises(KernelError, match="outside the allowed data roots"):
        McpKernel(url=url, token=token, data_files=[secret], retries=0).start()
    with pytest.raises(KernelError, match="workspace must be under"):
        McpKernel(url=url, token=token, workdir=tmp_path / "ws", retries=0).start()


def test_an_unreachable_server_fails_clearly_after_retries() -> None:
    k = McpKernel(server_command=[sys.executable, "-c", "import sys; sys.exit(3)"], retries=2, backoff_s=0.05)
    started = time.monotonic()
    with pytest.raises(KernelError, match="after 3 attempts"):
        k.start()
    assert time.monotonic() - started < 60


def _server_pids() -> list[int]:
    """Our own `python -m sandbox` children (the stdio server McpKernel started)."""
    me, found = os.getpid(), []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == me and b"sandbox" in cmd and b"-m" in cmd:
            found.append(int(d.name))
    return found


def test_a_lost_server_is_replaced_and_dataframes_come_back(tmp_path: Path) -> None:
    before = set(_server_pids())  # servers a pool in this process keeps for later runs are not ours
    with McpKernel(workdir=tmp_path / "ws", backoff_s=0.1) as k:
        k.execute("import pandas as pd\nframe = pd.DataFrame({'a': [1, 2, 3]})")
        where = k.execute("from ipykernel.connect import get_connection_file\nprint(get_connection_file())")
        runtime = Path(where.stdout.strip()).parent  # the server's private folder for this kernel
        assert runtime.is_dir() and runtime.name.startswith("investigator-kernel-")
        (pid,) = set(_server_pids()) - before
        os.kill(pid, signal.SIGKILL)
        lost = k.execute("1 + 1")
        assert lost.restarted and lost.error is not None and lost.error.name == "SandboxRestarted"
        assert lost.restored == ["frame"]
        assert k.execute("int(frame.a.sum())").result == "6"
    if own_pid_namespace():  # guarded (sandbox/kernel_guard.py): the orphaned kernel removes it as it exits
        deadline = time.monotonic() + 20
        while runtime.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not runtime.exists()
