"""LLM-path fixtures: the real `openai` + `instructor` client against a scripted HTTP server.

No real network (the suite-wide guard in tests/conftest.py), and OPENAI_* variables of the developer's
shell are cleared. Backoff tiers are milliseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from investigator.llm import LLMSettings
from investigator.sources.synth import generate
from investigator.testing import FakeOpenAI

from .helpers import FAST


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
