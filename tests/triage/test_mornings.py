"""The job over consecutive mornings on real files and SQLite state, a real webhook: a move that
lasts a week is announced once and its end once; a load that did not arrive is said (once); a
backfill's `--end` on a day without rows is said, in JSON lines only. The investigation seam
answers at once (investigations are test_job's business)."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from investigator.triage.config import TriageConfig
from investigator.triage.job import run_triage

from .shapes import START, daily
from .test_deferred import answer
from .test_job import triage
from .webhook import Hook

MOVE = START + timedelta(days=120)  # station b at half its riders for seven days from here


def body(data: Path, tmp: Path, url: str) -> dict[str, Any]:
    return {"data": str(data), "metrics": ["riders"], "window": "1d", "baseline": "wow",
            "scan_segments": ["station"], "dimensions": ["station"], "notify": [url],
            "state": str(tmp / "state.sqlite"), "runs_dir": str(tmp / "runs")}  # fmt: skip


def morning(d: date) -> datetime:
    return datetime(d.year, d.month, d.day, 6, 30, tzinfo=UTC)


def test_a_week_long_move_run_daily_is_announced_once_and_its_end_once(tmp_path: Path) -> None:
    full = daily(
        tmp_path / "full.parquet",
        140,
        lambda d, s: 0.5 if s == "b" and MOVE <= d < MOVE + timedelta(7) else 1.0,
    )
    frame = pd.read_parquet(full)
    data = tmp_path / "data.parquet"
    said: list[str] = []
    with Hook() as hook:
        config = TriageConfig.model_validate(body(data, tmp_path, hook.url()))
        for k in range(9):  # the mornings after MOVE .. MOVE + 8: the data ends the day before
            day = MOVE + timedelta(days=k)
            frame[pd.to_datetime(frame["date"]).dt.date <= day].to_parquet(data, index=False)
            outcome = run_triage(config, investigate=answer, backoff_s=0.01, now=morning(day + timedelta(1)))
            said += [
                f"{day} {a.event} {a.segment}" for a in outcome.digest.alerts if a.segment == {"station": "b"}
            ]
        messages = [payload["message"] for _, payload in hook.received]
    lines = [line for m in messages for line in m.splitlines() if "station=b" in line]
    assert len([x for x in lines if "ended" not in x]) == 1, messages  # announced once, not seven times
    assert len([x for x in lines if x.startswith("- ended:")]) == 1, lines
    assert said[0] == f"{MOVE} new {{'station': 'b'}}"
    events = [x.split()[1] for x in said]  # (some mornings the total heads the alert, b under it)
    assert events.count("new") == 1 and events[-1] == "ended" and set(events[1:-1]) == {"continues"}, said


def test_a_load_that_did_not_arrive_is_said_once(tmp_path: Path) -> None:
    data = daily(tmp_path / "data.parquet", 120)
    last = START + timedelta(days=119)
    with Hook() as hook:
        config = TriageConfig.model_validate(body(data, tmp_path, hook.url()))
        runs = [run_triage(config, investigate=answer, backoff_s=0.01, now=morning(last + timedelta(days=k)))
                for k in (1, 1, 2, 3)]  # fmt: skip
        messages = [payload["message"] for _, payload in hook.received]
    assert [len(r.digest.stale) for r in runs] == [0, 0, 1, 1]  # a re-run the same morning is not stale
    assert (
        runs[2].digest.stale[0].last == last
        and f"its last day is still {last}" in runs[2].digest.stale[0].reason
    )
    assert sum("did not arrive" in m for m in messages) == 1
    assert runs[2].exit_code == 3


def test_a_backfill_end_without_rows_is_said_in_json_lines_only(tmp_path: Path) -> None:
    data = daily(tmp_path / "data.parquet", 120)
    after = START + timedelta(days=125)
    with Hook() as hook:
        path = tmp_path / "triage.yaml"
        path.write_text(yaml.safe_dump(body(data, tmp_path, hook.url())))
        out = triage("--config", str(path), "--end", after.isoformat(), "--log-format", "json")
        messages = [payload["message"] for _, payload in hook.received]
    logs = [json.loads(line) for line in out.stderr.strip().splitlines()]  # every line is JSON
    assert {"level": "error", "event": "scan failed"}.items() <= next(
        x for x in logs if x["event"] == "scan failed"
    ).items()
    assert any(x["event"] == "stale data" and x["level"] == "warning" for x in logs)
    assert len(messages) == 1 and f"no rows for {after}" in messages[0]
    assert out.exit_code == 1


def test_a_yaml_mistake_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "triage.yaml"
    path.write_text("data: x.parquet\nmetrics: [riders\nwindow: 7d\n")
    out = triage("--config", str(path), "--log-format", "json")
    [line] = out.stderr.strip().splitlines()
    assert out.exit_code == 2 and "line 3, column 7" in json.loads(line)["error"]
