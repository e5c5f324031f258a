"""LLM settings come from configs/llm.yaml, then INVESTIGATOR_LLM_* and OPENAI_* variables, then
arguments; the key stays secret; the benchmark fails clearly without a server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from investigator.errors import ConfigError
from investigator.llm import LLMSettings, load_llm_settings

ROOT = Path(__file__).resolve().parents[2]


def test_env_overrides_yaml_and_arguments_override_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "llm.yaml").write_text("model: from-yaml\nreflect_every: 3\nmode: json\n")
    monkeypatch.setenv("INVESTIGATOR_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("INVESTIGATOR_LLM_MODE", "md_json")
    monkeypatch.setenv("INVESTIGATOR_LLM_CONNECTION_BACKOFF_S", "[0.1, 0.2]")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    s = load_llm_settings(model="from-flag")
    assert (s.model, s.reflect_every, s.mode, s.connection_backoff_s) == (
        "from-flag",
        3,
        "md_json",
        [0.1, 0.2],
    )
    assert s.base_url == "http://localhost:8000/v1" and s.api_key is not None
    assert s.api_key.get_secret_value() == "sk-from-env"
    assert "sk-from-env" not in repr(s) + s.model_dump_json()


def test_a_malformed_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="reflect_every"):
        load_llm_settings(reflect_every=-1)


def test_the_shipped_defaults() -> None:
    s = LLMSettings()
    assert (s.model, s.reflect_every, s.max_validation_retries) == ("gpt-4o-mini", 5, 2)


def test_the_benchmark_fails_clearly_without_a_server() -> None:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "llm_eval.py"), "--base-url", "http://127.0.0.1:9/v1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "no OpenAI-compatible server answers at http://127.0.0.1:9/v1" in proc.stderr
