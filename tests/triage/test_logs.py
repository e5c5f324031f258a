"""What a cron job's log holds: without a terminal the table's lines are whole (never cut at 80
columns), and with `--log-format json` every stderr line is JSON."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from .test_job import triage, write

LONG = "revenue_from_the_social_channel_in_the_reporting_currency"


def test_a_non_tty_run_prints_whole_lines_and_json_logs_only(tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "metrics.yaml").write_text(yaml.safe_dump({"metrics": {LONG: {"expression": "revenue"}}}))
    drop = write(tmp_path, "drop", "segment_change", 3, segment={"channel": "social"}, factor=0.4)
    path = tmp_path / "triage.yaml"
    state = str(tmp_path / "s.sqlite")
    body = {"data": drop, "metrics": [LONG], "scan_segments": ["channel"], "state": state,
            "runs_dir": str(tmp_path / "runs"), "budget": {"max_investigations": 0}}  # fmt: skip
    path.write_text(yaml.safe_dump(body))
    out = triage("--config", str(path), "--log-format", "json",
                 env={"INVESTIGATOR_CONFIG_DIR": str(configs), "COLUMNS": "80"})  # fmt: skip
    assert out.exit_code == 0, out.stderr
    assert (tmp_path / "runs").is_dir()  # a digest was written: its folder is in the JSON lines
    [row] = [line for line in out.stdout.splitlines() if "channel=social" in line]
    assert LONG in row and "budget" in row  # one line, the name whole
    lines = out.stderr.strip().splitlines()
    assert lines and all(json.loads(line)["event"] for line in lines)
