"""Issue 39, item 2: `investigate describe DATA` prints what `describe_data` gives an assistant
(columns and types, the time column and grain, the dates, dimensions with their number of values,
numeric measures) and a first command to try; a mistake is one line and exit 2."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from typer.testing import CliRunner

from investigator.front.cli import app
from investigator.sources.synth import generate


def _describe(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(app, ["describe", *args], env={"COLUMNS": "200"})
    return r.exit_code, r.output


def test_describe_says_what_a_run_would_read_and_what_to_try(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=2, days=60, segment={"channel": "social"}, factor=0.5)
    frame = frame.rename(columns={"date": "day"})
    path = tmp_path / "sales.parquet"
    frame.to_parquet(path, index=False)
    code, out = _describe(str(path))
    assert code == 0, out
    assert f"{path}: {len(frame):,} rows, {len(frame.columns)} columns" in out
    assert f"time column: day, daily, {frame['day'].min():%Y-%m-%d} to {frame['day'].max():%Y-%m-%d}" in out
    assert f"channel ({frame['channel'].nunique()} values)" in out
    assert "numeric measures: " in out and "revenue" in out.split("numeric measures: ")[1].splitlines()[0]
    (tried,) = [line for line in out.splitlines() if line.startswith("try: ")]
    words = shlex.split(tried.removeprefix("try: "))
    assert words[:3] == ["investigate", "--data", str(path)]
    assert words[words.index("--time-column") + 1] == "day"  # a run would look for 'date' by itself
    code, out = _describe(str(path), "--json")
    assert code == 0 and json.loads(out)["time_column"] == "day"


def test_a_missing_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    code, out = _describe(str(tmp_path / "nope.csv"))
    assert code == 2 and out.startswith("error: data file ") and len(out.strip().splitlines()) == 1
