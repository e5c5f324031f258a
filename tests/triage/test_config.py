"""The YAML people give the job: aliases within a budget, and messages that quote input cut short."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from investigator.errors import ConfigError
from investigator.yamlfile import load_yaml

# 9 lists of 9 lists ... seven levels deep: ~400 bytes that expand to 4.8 million values
BOMB = "".join(
    ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n']
    + [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 7)]
    + ["data: sales.csv\nmetrics: *a6\n"]
)

MEASURE = (
    "import resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
    "sys.stdout.write(f'{r.returncode}\\n{resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss}\\n{r.stderr}')\n"
)


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[int, int, str]:
    """Exit code, peak memory (MB) and stderr of one real `investigate` command."""
    r = subprocess.run(
        [sys.executable, "-c", MEASURE, sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, env={**os.environ, **(env or {})},
    )  # fmt: skip
    code, peak_kb, stderr = r.stdout.split("\n", 2)
    return int(code), int(peak_kb) // 1024, stderr


def test_a_yaml_alias_bomb_in_a_triage_config_is_refused_in_one_short_line(tmp_path: Path) -> None:
    assert len(BOMB) < 500
    (tmp_path / "triage.yaml").write_text(BOMB)
    code, peak_mb, stderr = cli("triage", "--config", "triage.yaml", cwd=tmp_path)
    assert code == 2, stderr[:2000]
    assert len(stderr) < 500 and len(stderr.strip().splitlines()) == 1, stderr[:2000]
    assert "aliases expand to" in stderr and "triage.yaml" in stderr
    assert peak_mb < 400


def test_a_yaml_alias_bomb_in_metrics_yaml_is_refused_in_one_short_line(tmp_path: Path) -> None:
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "metrics.yaml").write_text(BOMB.replace("metrics: *a6", "metrics: {m: *a6}"))
    code, _, stderr = cli("--metric", "revenue", cwd=tmp_path, env={"INVESTIGATOR_WARM": "0"})
    assert code == 2, stderr[:2000]
    assert len(stderr) < 500 and "metrics.yaml" in stderr and "aliases expand to" in stderr


def test_a_huge_value_is_quoted_short(tmp_path: Path) -> None:
    (tmp_path / "triage.yaml").write_text(
        f"data: sales.csv\nmetrics: [revenue]\nbaseline: {'x' * 5_000_000}\nthreshold: [{'1, ' * 100_000}1]\n"
    )
    code, _, stderr = cli("triage", "--config", "triage.yaml", cwd=tmp_path)
    assert code == 2 and len(stderr) < 600 and "baseline" in stderr, stderr[:2000]


def test_aliases_in_moderation_still_read_and_a_self_reference_does_not() -> None:
    text = "defaults: &d {window: 7d, direction: down}\nm1: {<<: *d, metric: revenue}\nm2: {<<: *d}\n"
    assert load_yaml(text)["m1"] == {"window": "7d", "direction": "down", "metric": "revenue"}
    with pytest.raises(ConfigError, match="refers to the value that holds it"):
        load_yaml("a: &a [1, *a]\n")
    with pytest.raises(ConfigError, match="aliases expand to"):
        load_yaml(BOMB)
