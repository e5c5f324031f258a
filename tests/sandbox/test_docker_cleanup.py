"""Containers are labelled, removed on cleanup and at exit, and swept when their owner crashed."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from investigator.kernels.mcp import McpKernel
from sandbox.kernels.docker import LABEL, docker_client, sweep_orphans

from .conftest import child_env, needs_docker

pytestmark = [pytest.mark.docker, needs_docker]

START_AND_WAIT = """
import sys, time
from pathlib import Path
from sandbox.kernels.docker import DockerKernel
k = DockerKernel(Path(sys.argv[1]), memory="256m")
k.start()
print(k.container.id, flush=True)
if sys.argv[2] == "hang":
    time.sleep(600)
"""


def _ours(client: Any) -> set[str]:
    return {c.id for c in client.containers.list(all=True, filters={"label": LABEL})}


def _start_in_child(tmp_path: Path, mode: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(START_AND_WAIT), str(tmp_path / "ws"), mode],
        stdout=subprocess.PIPE,
        text=True,
        env=child_env(),
    )
    assert proc.stdout is not None
    return proc, proc.stdout.readline().strip()


def _close(proc: subprocess.Popen[str]) -> None:
    """The child's pipe, once it has said what it had to."""
    if proc.stdout is not None:
        proc.stdout.close()


def test_cleanup_removes_the_container(tmp_path: Path) -> None:
    client = docker_client()
    with McpKernel(backend="docker", workdir=tmp_path / "ws", memory="256m") as k:
        k.execute("1")
        during = _ours(client)
        assert during
        labels = client.containers.get(next(iter(during))).labels
        assert labels[LABEL] == "1" and f"{LABEL}.owner" in labels
    assert not _ours(client) & during


def test_a_process_that_exits_without_shutdown_leaves_no_container(tmp_path: Path) -> None:
    client = docker_client()
    proc, cid = _start_in_child(tmp_path, "exit")
    assert proc.wait(timeout=60) == 0
    _close(proc)
    assert cid and cid not in _ours(client)  # removed by the atexit hook


def test_a_crashed_owner_leaves_an_orphan_that_the_next_start_sweeps(tmp_path: Path) -> None:
    client = docker_client()
    proc, cid = _start_in_child(tmp_path, "hang")
    proc.send_signal(signal.SIGKILL)  # no atexit, no cleanup: a real crash
    proc.wait(timeout=30)
    _close(proc)
    assert cid in _ours(client)
    with McpKernel(backend="docker", workdir=tmp_path / "next", memory="256m"):
        assert cid not in _ours(client)  # the new server swept it when it started


def test_a_live_owner_keeps_its_container(tmp_path: Path) -> None:
    client = docker_client()
    proc, cid = _start_in_child(tmp_path, "hang")
    try:
        sweep_orphans(client)
        assert cid in _ours(client)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        _close(proc)
        sweep_orphans(client)
    assert cid not in _ours(client)
