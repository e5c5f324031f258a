"""Whole triage runs through the command line: real investigations (offline planner, local
kernels, two workers), a real webhook, SQLite state shared across runs."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from investigator.front.cli import app
from investigator.sources.synth import generate
from investigator.triage.state import state_lock

from .webhook import Hook

DIMS = {"country": ["US", "GB", "DE", "FR"], "channel": ["organic", "social", "email"]}
SECRET = "tok-9f8e7d6c5b4a"


def write(folder: Path, name: str, cause: str, seed: int, **kw: Any) -> str:
    frame, _ = generate(cause, seed=seed, dims=DIMS, days=70, scale=20, **kw)
    path = folder / f"{name}.parquet"
    frame.to_parquet(path, index=False)
    return str(path)


def config(folder: Path, **overrides: Any) -> Path:
    """Three metrics moved by a planted cause, one flat, and one whose investigation must fail
    (it asks for a dimension the data does not have)."""
    drop = write(folder, "drop", "segment_change", 3, segment={"channel": "social"}, factor=0.4)
    rise = write(folder, "rise", "segment_change", 7, segment={"country": "DE"}, factor=1.8)
    flat = write(folder, "flat", "no_change", 4)
    body = {
        "data": drop,
        "time_column": "date",
        "window": "7d",
        "dimensions": ["country", "channel"],
        "metrics": [
            "revenue",
            {"metric": "sessions", "data": rise},
            {"metric": "orders/sessions", "data": flat},
            {"orders": {"dimensions": ["country", "nope"]}},
        ],
        "scan_segments": ["channel"],
        "budget": {"max_investigations": 5, "max_minutes": 10},
        "workers": 2,
        "planner": "offline",
        "sandbox": "local",
        "max_iterations": 10,
        "state": str(folder / "state" / "triage.sqlite"),
        "runs_dir": str(folder / "runs"),
        **overrides,
    }
    path = folder / "triage.yaml"
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def triage(*args: str, env: dict[str, str] | None = None) -> Result:
    out = CliRunner().invoke(app, ["triage", *args], env=env, catch_exceptions=False)
    return Result(out.exit_code, out.stdout, out.stderr)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The same morning's job run twice on one state, notifying a real webhook."""
    folder = tmp_path_factory.mktemp("triage")
    cwd = os.getcwd()
    os.chdir(folder)  # anything a run writes beside itself stays in the temporary folder
    try:
        with Hook() as hook:
            path = config(folder, notify=[hook.url("/hook/${HOOK_TOKEN}")])
            env = {"HOOK_TOKEN": SECRET}
            first = triage(
                "--config", str(path), "--json", str(folder / "digest.json"), "--log-format", "json", env=env
            )
            posts_after_first = len(hook.received)
            second = triage("--config", str(path), env=env)
            digests = sorted((folder / "runs").glob("triage-*/digest.json"))
            yield {
                "folder": folder,
                "first": first,
                "second": second,
                "hook": hook,
                "posts_after_first": posts_after_first,
                "first_digest": json.loads(digests[0].read_text()),
                "second_digest": json.loads(digests[-1].read_text()),
            }
    finally:
        os.chdir(cwd)


def test_the_digest_names_the_planted_causes(two_runs: dict[str, Any]) -> None:
    d = two_runs["first_digest"]
    assert set(d) == {"scanned", "investigated", "skipped", "notifications", "alerts", "stale"}
    flagged = {(s["metric"], json.dumps(s["segment"])) for s in d["scanned"] if s["flagged"]}
    assert ("revenue", json.dumps({"channel": "social"})) in flagged
    assert not any(m == "orders/sessions" for m, _ in flagged)  # the flat metric is not flagged
    runs = {i["metric"]: i for i in d["investigated"]}
    assert runs["revenue"]["status"] == "concluded"
    # the flagged segment is investigated on its own rows: social fell in every country, so within
    # it every country fell alike (broad-based), not one country; and of revenue's drivers
    # (sessions x conversion x aov), the traffic fell
    assert runs["revenue"]["segment"] == {"channel": "social"}
    causes = [(c["kind"], c["segment"], c["driver"]) for c in runs["revenue"]["root_causes"]]
    assert causes == [("broad_based", {}, None), ("driver_change", {}, "sessions")]
    assert runs["sessions"]["status"] == "concluded"
    folder = two_runs["folder"]
    for metric in ("revenue", "sessions"):  # each run kept the rows of the segment it was given
        report = json.loads((folder / "runs" / runs[metric]["run_id"] / "report.json").read_text())
        kept = ",".join(f"{k}={v}" for k, v in runs[metric]["segment"].items()) or None
        assert report["inputs"]["filter"] == kept
    for metric in ("revenue", "sessions"):  # each investigation is a normal run folder
        run = folder / "runs" / runs[metric]["run_id"]
        assert (run / "report.html").exists() and (run / "investigation.ipynb").exists()
    first = sorted((folder / "runs").glob("triage-*"))[0]
    md, html = (first / "digest.md").read_text(), (first / "digest.html").read_text()
    assert "channel=social" in md and "country=DE" in html and "report.html" in html
    assert "sessions fell" in md  # the alert says which driver moved
    assert json.loads((folder / "digest.json").read_text()) == d  # --json writes the same digest


def test_one_failing_investigation_is_recorded_and_the_others_finish(two_runs: dict[str, Any]) -> None:
    first = two_runs["first"]
    assert first.exit_code == 3, first.stderr
    runs = {i["metric"]: i for i in two_runs["first_digest"]["investigated"]}
    assert runs["orders"]["status"] == "failed" and "'nope'" in runs["orders"]["conclusion"]
    assert runs["revenue"]["status"] == runs["sessions"]["status"] == "concluded"
    logs = [json.loads(line) for line in first.stderr.splitlines() if line.startswith("{")]
    assert {"investigated", "investigation failed", "digest written"} <= {x["event"] for x in logs}
    # two workers: the second investigation started before the first one finished
    events = [x["event"] for x in logs if x["event"] in ("investigating", "investigated")]
    assert events[:2] == ["investigating", "investigating"]


def test_one_message_per_run_and_none_for_what_was_already_told(two_runs: dict[str, Any]) -> None:
    hook: Hook = two_runs["hook"]
    assert two_runs["posts_after_first"] == 1
    path, payload = hook.received[0]
    assert path == f"/hook/{SECRET}"
    assert "revenue" in payload["message"] and "sessions" in payload["message"]
    assert two_runs["first_digest"]["notifications"][0]["ok"] is True
    assert len(hook.received) == 1  # the second run told nobody anything
    assert two_runs["second_digest"]["notifications"] == []


def test_the_second_run_investigates_nothing_already_investigated(two_runs: dict[str, Any]) -> None:
    second = two_runs["second_digest"]
    assert {i["metric"] for i in second["investigated"]} == {"orders"}  # only the failed one again
    reasons = {(s["metric"], s["reason"]) for s in second["skipped"]}
    assert ("revenue", "already investigated and notified") in reasons
    assert ("sessions", "already investigated and notified") in reasons


def test_secrets_are_masked_in_digest_logs_and_state(two_runs: dict[str, Any]) -> None:
    folder: Path = two_runs["folder"]
    written = [p.read_text() for p in (folder / "runs").glob("triage-*/digest.*")]
    assert written and all(SECRET not in text for text in written)
    assert SECRET not in two_runs["first"].stderr + two_runs["first"].stdout
    assert "****" in two_runs["first_digest"]["notifications"][0]["target"]
    rows = sqlite3.connect(folder / "state" / "triage.sqlite").execute("select * from anomalies").fetchall()
    assert rows and SECRET not in repr(rows)


def test_dry_run_scans_and_prints_but_investigates_and_notifies_nothing(tmp_path: Path) -> None:
    with Hook() as hook:
        path = config(tmp_path, notify=[hook.url()])
        out = triage("--config", str(path), "--dry-run", "--json", str(tmp_path / "dry.json"))
    assert out.exit_code == 0, out.stderr
    assert "revenue" in out.stdout and "dry run" in out.stdout
    assert hook.received == []
    assert not (tmp_path / "runs").exists() and not (tmp_path / "state").exists()
    digest = json.loads((tmp_path / "dry.json").read_text())
    assert digest["investigated"] == [] and any(s["flagged"] for s in digest["scanned"])


def test_a_second_triage_on_the_same_state_exits_with_a_clear_message(tmp_path: Path) -> None:
    path = config(tmp_path)
    with state_lock(tmp_path / "state" / "triage.sqlite"):
        out = triage("--config", str(path))
    assert out.exit_code == 1
    assert "another triage run is using" in out.stderr
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"direction": "sideways"}, "`direction`: Input should be 'both', 'up' or 'down'"),
        ({"notfy": ["json://x"]}, "unknown key `notfy`: did you mean `notify`?"),
        ({"budget": {"max_minutes": -1}}, "`budget.max_minutes`"),
        ({"window": "7 fortnights"}, "`window`"),
        ({"notify": ["slack://${NOT_SET_ANYWHERE}"]}, "${NOT_SET_ANYWHERE} is not set in the environment"),
    ],
)
def test_a_bad_config_exits_2_with_one_line_naming_the_key(
    tmp_path: Path, change: dict[str, Any], expected: str
) -> None:
    path = tmp_path / "triage.yaml"
    path.write_text(yaml.safe_dump({"data": "x.parquet", "metrics": ["revenue"], **change}))
    out = triage("--config", str(path))
    assert out.exit_code == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert expected in out.stderr
