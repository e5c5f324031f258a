"""Regression (issue 37, item 4): sixty nested parentheses in `--filter`, `--sql` or a triage
`sql:` ended in a 1,160-line traceback after about two minutes (exit 1). They are refused in one
line (exit 2) before anything parses them, as is a condition past its length cap."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from investigator.errors import ConfigError
from investigator.triage.config import load_config

from .conftest import cli, write_synth

DEEP = "(" * 60 + "a = 1" + ")" * 60


@pytest.mark.parametrize(
    "args",
    [["--filter", DEEP], ["--data", "duckdb://", "--sql", f"select * from t where {DEEP}"],
     ["--filter", "a = 1 or " * 3_000 + "a = 1"]],
    ids=["filter", "sql", "long filter"],
)  # fmt: skip
def test_a_deeply_nested_condition_is_one_line_exit_2(tmp_path: Path, args: list[str]) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3)
    data = [] if "--data" in args else ["--data", str(path)]
    out = cli("--metric", "revenue", *data, *args, env={"INVESTIGATOR_WARM": "0"}, cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-2000:]
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and ("nests parentheses 60 deep" in lines[0] or "characters long" in lines[0])
    assert "(((((" not in lines[0]


def test_a_deeply_nested_triage_sql_is_refused_naming_the_key(tmp_path: Path) -> None:
    config = {"data": "duckdb:///shop.ddb", "sql": f"select * from sales where {DEEP}",
              "metrics": ["revenue"], "time_column": "date", "window": "7d"}  # fmt: skip
    path = tmp_path / "triage.yaml"
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match="nests parentheses 60 deep"):
        load_config(path)


def test_an_argument_too_long_is_a_user_error_that_does_not_echo_it(tmp_path: Path) -> None:
    """Issue 37 item 7, on the command line: a 100 KB `--data` was an OSError's traceback."""
    out = cli("--metric", "revenue", "--data", "y" * 100_000, env={"INVESTIGATOR_WARM": "0"}, cwd=tmp_path)
    assert out.returncode == 2, out.stderr[-500:]
    assert out.stderr.strip() == "error: --data is 100,000 characters long, more than 4,096: shorten it"
