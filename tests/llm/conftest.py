"""LLM-path fixtures: the real `openai` + `instructor` client against a scripted HTTP server.

No real network: connections anywhere but loopback fail, and OPENAI_* variables of the developer's
shell are cleared. Backoff tiers are milliseconds.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from investigator.llm import LLMSettings
from investigator.synth import generate
from investigator.testing import FakeOpenAI

from .helpers import FAST


@pytest.fixture(autouse=True)
def no_real_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only loopback connections: a test that would reach a real endpoint fails instead."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        host = address[0] if isinstance(address, tuple) else None
        if host is not None:
            try:
                loopback = ipaddress.ip_address(host).is_loopback
            except ValueError:
                loopback = host == "localhost"
            if not loopback:
                raise OSError(f"tests may not reach the network ({host})")
        return real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


@pytest.fixture(autouse=True)
def clean_llm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for key in list(os.environ):
        if key.startswith(("OPENAI_", "INVESTIGATOR_")):
            monkeypatch.delenv(key)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as s:
        yield s


@pytest.fixture
def waits() -> list[tuple[float, str]]:
    return []


@pytest.fixture
def llm_settings(server: FakeOpenAI) -> Callable[..., LLMSettings]:
    def make(**overrides: Any) -> LLMSettings:
        return LLMSettings(**{"base_url": server.url, "api_key": "sk-test-key", **FAST, **overrides})

    return make


@pytest.fixture(scope="session")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    """A revenue drop planted in country=JP (seed 3), as a Parquet file and its truth."""
    data, truth = generate("segment_change", seed=3)
    path = tmp_path_factory.mktemp("scenario") / "data.parquet"
    data.to_parquet(path)
    assert truth["causes"] == [{"kind": "segment_change", "segment": {"country": "JP"}}]
    return path, truth
