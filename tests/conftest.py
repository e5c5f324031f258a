"""Shared fixtures. Real network calls are blocked: only loopback and local sockets are allowed."""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from investigator.config import load_settings
from investigator.sources.synth import generate

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

_real_connect = socket.socket.connect

# Runs remember what they found (`.investigator/` in the working directory): never in the checkout,
# and never carried from one test to the next. Session fixtures share one home; each test gets its own.
_SESSION_HOME = tempfile.mkdtemp(prefix="investigator-test-home-")
os.environ["INVESTIGATOR_HOME"] = _SESSION_HOME
atexit.register(shutil.rmtree, _SESSION_HOME, True)
# the private folder (the key that signs approved facts) is never the user's own either; one for the
# session: it is part of the environment that tells one warm helper from another
_SESSION_PRIVATE = tempfile.mkdtemp(prefix="investigator-test-private-")
os.environ["INVESTIGATOR_PRIVATE_DIR"] = _SESSION_PRIVATE
atexit.register(shutil.rmtree, _SESSION_PRIVATE, True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `long` (each over ~15 s on 2 cores: a real model, Spark's JVM, a run killed
    and resumed) start first. With `--dist worksteal` (pyproject) the worker that takes them is
    relieved by the other stealing from the end of its queue, so no long test is left to run alone
    at the end of the suite."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: order kept within


@pytest.fixture(autouse=True)
def _own_memory_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INVESTIGATOR_HOME", str(tmp_path_factory.mktemp("home")))


def _guarded_connect(self: socket.socket, address: object) -> object:
    if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        host = str(address[0])
        try:
            local = ipaddress.ip_address(host).is_loopback
        except ValueError:
            local = host == "localhost"
        if not local:
            raise ConnectionRefusedError(f"tests may not reach the network ({host})")
    return _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture
def shared() -> Path:
    if not SHARED.exists():
        pytest.skip(
            f"../shared not present beside the project ({SHARED}): shared scenarios are only in the dev tree"
        )
    return SHARED


@pytest.fixture
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_settings(runs_dir=tmp_path / "runs")


def write_synth(folder: Path, cause: str, **kw: object) -> tuple[Path, dict[str, Any]]:
    frame, truth = generate(cause, **kw)  # type: ignore[arg-type]
    path = folder / f"{cause}.parquet"
    frame.to_parquet(path, index=False)
    return path, truth


@pytest.fixture
def segment_drop(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    return write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m investigator ARGS`, as a user runs it: its exit code and what it printed."""
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}, cwd=cwd,
    )  # fmt: skip
