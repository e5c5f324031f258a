"""Memory end to end: an approved fact changes a conclusion; proposals wait for a person; a
recalled cause is a hypothesis the data must bear out, never a conclusion."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from investigator.config import Settings
from investigator.memory import ledger
from investigator.memory.models import FactProposal
from investigator.report.model import Report
from investigator.request import build_request
from investigator.run.state import load
from investigator.runner import investigate

from ..conftest import write_synth


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, "INVESTIGATOR_HOME": str(home)},
    )  # fmt: skip


def run(data: Path, settings: Settings) -> Report:
    request = build_request("revenue", str(data), "7d", None, "previous", None, None, None)
    return investigate(request, settings)


@pytest.mark.long
def test_an_approved_late_data_fact_turns_a_segment_drop_into_incomplete_recent_data(
    tmp_path: Path, home: Path
) -> None:
    """The real CLI and the MCP sandbox: before the fact, affiliate dropped; after a person approves
    "affiliate lands 4 days late" (days enough to hold its drop), the same data reads as incomplete
    recent data: the cause, the hypothesis table and the headline."""
    data, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "affiliate"}, factor=0.5)
    args = ["--data", str(data), "--metric", "revenue", "--window", "7d",
            "--runs-dir", str(tmp_path / "runs"), "--quiet", "--home", str(home)]  # fmt: skip
    before = cli(*args, "--json", str(tmp_path / "before.json"), home=home)
    assert before.returncode == 0, before.stderr
    assert "Explained by channel=affiliate" in before.stdout
    ledger.propose(
        home,
        FactProposal(id="", topic="revenue", kind="late_data", segment={"channel": "affiliate"}, lag_days=4,
                     metrics=["revenue"], text="channel=affiliate data lands four days late"),
    )  # fmt: skip
    (pending,), _ = ledger.pending(home)
    approved = cli("facts", "approve", pending.id, "--home", str(home), home=home)
    assert approved.returncode == 0 and pending.id in approved.stdout, approved.stderr
    assert "[late_data channel=affiliate lag=4d" in (home / "facts" / "revenue.md").read_text()

    after = cli(*args, "--json", str(tmp_path / "after.json"), home=home)
    assert after.returncode == 0, after.stderr
    report = json.loads((tmp_path / "after.json").read_text())
    assert "incomplete recent data in channel=affiliate" in report["conclusion"]
    assert "Explained by channel=affiliate" not in report["conclusion"]
    assert [f["id"] for f in report["facts"]] == [pending.id]
    assert report["root_causes"][0]["segment"] == {"channel": "affiliate"}
    assert report["root_causes"][0]["kind"] == "data_quality"
    dq = next(h for h in report["hypotheses"] if h["id"] == "H1")  # the data-quality hypothesis
    assert dq["status"] == "CONFIRMED"
    assert report["root_causes"][0]["verified"] is True  # the numbers still hold
    first = json.loads((tmp_path / "before.json").read_text())
    assert {r["run_id"] for r in report["recalled"]} == {first["run_id"]}
    assert all(set(r) >= {"run_id", "text", "score"} for r in report["recalled"])
    assert any(f"Recalled from run {first['run_id']}" in n for n in report["notes"])


def test_an_agent_proposal_waits_for_a_person_and_a_rejection_never_enters(
    tmp_path: Path, msettings: Settings, home: Path
) -> None:
    late, _ = write_synth(tmp_path, "incomplete_recent_data", seed=1)
    drop, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    first = run(late, msettings)
    (proposal,), _ = ledger.pending(home)
    assert proposal.kind == "late_data" and proposal.lag_days == 2 and proposal.run_id == first.run_id
    assert ledger.approved(home)[0] == []

    pending_run = run(drop, msettings)
    assert pending_run.facts == [] and "incomplete recent data" not in pending_run.conclusion

    rejected_home = tmp_path / "rejected-home"
    rejected = msettings.model_copy(update={"home": rejected_home})
    run(late, rejected)
    (p2,), _ = ledger.pending(rejected_home)
    ledger.reject(rejected_home, p2.id)
    again = run(late, rejected)
    assert ledger.pending(rejected_home)[0] == []  # not proposed again
    assert again.facts == [] and run(drop, rejected).facts == []

    ledger.approve(home, proposal.id)
    approved_run = run(drop, msettings)
    assert [f.id for f in approved_run.facts] == [proposal.id]
    state = load(msettings.runs_dir / approved_run.run_id)
    assert state.memory.facts[0].id == proposal.id  # kept in the state: a resume sees the same
    # a fact about the whole metric's last days never explains one channel's drop
    assert "incomplete recent data" not in approved_run.conclusion
    assert approved_run.root_causes[0].segment == {"channel": "social"}


def test_a_recalled_cause_is_tested_not_concluded(tmp_path: Path, msettings: Settings) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    social = {"channel": "social"}
    dropped, _ = write_synth(tmp_path / "a", "segment_change", seed=3, segment=social, factor=0.5)
    first = run(dropped, msettings)
    assert first.root_causes[0].segment == {"channel": "social"} and first.recalled == []
    # the same table, reloaded with the cause removed: the same draws, factor 1
    flat, _ = write_synth(tmp_path / "b", "segment_change", seed=3, segment={"channel": "social"}, factor=1.0)
    kept = dropped.read_bytes()
    dropped.write_bytes(flat.read_bytes())
    second = run(dropped, msettings)
    assert first.run_id in {r.run_id for r in second.recalled}
    assert "social" not in second.conclusion
    assert all(c.segment != {"channel": "social"} for c in second.root_causes)
    assert any("not found in this data" in n for n in second.notes)
    dropped.write_bytes(kept)
    third = run(dropped, msettings)
    assert third.root_causes[0].segment == {"channel": "social"}
    assert any("Seen before" in n and first.run_id in n for n in third.notes)


def test_a_corrupt_home_never_fails_a_run(tmp_path: Path, msettings: Settings, home: Path) -> None:
    home.write_text("not a folder")
    data, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    report = run(data, msettings)
    assert report.status == "concluded" and home.is_dir()
    assert any("not a folder" in n for n in report.notes)
    (home / "memory.db").write_bytes(b"garbage" * 500)
    again = run(data, msettings)
    assert again.status == "concluded" and any("memory.db" in n for n in again.notes)
