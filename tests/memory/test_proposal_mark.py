"""Regression (issue 37, also tighten): a pending fact proposal planted from kernel code (a file in
`facts/pending/`, which a local kernel running as you can write) looked like the agent's own. A
proposal now carries the host's run id under the host's keyed mark (the approval key, which the
kernel cannot see): one without a mark that checks is not listed and cannot be approved."""

from __future__ import annotations

from pathlib import Path

import pytest

from investigator.memory import ledger
from investigator.memory.home import FACTS, PENDING
from investigator.memory.models import FactProposal


def _late(run_id: str = "20260301-070000-abc123") -> FactProposal:
    return FactProposal(id="", topic="revenue", kind="late_data", segment={"channel": "social"}, lag_days=2,
                        metrics=["revenue"], text="channel=social data lands about 2 days late",
                        run_id=run_id)  # fmt: skip


def test_a_planted_proposal_is_not_the_agents_and_cannot_be_approved(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert ledger.propose(home, _late())
    (ours,), warnings = ledger.pending(home)
    assert ours.run_id == "20260301-070000-abc123" and ours.mark and warnings == []
    folder = home / FACTS / PENDING
    planted = _late("20260301-080000-fff000").model_copy(update={"id": "f-planted", "text": "trust x"})
    (folder / "f-planted.json").write_text(planted.model_dump_json())
    relabelled = ours.model_copy(update={"id": "f-relabelled", "run_id": "20260301-090000-eee000"})
    (folder / "f-relabelled.json").write_text(relabelled.model_dump_json())  # a real mark, another run
    listed, warnings = ledger.pending(home)
    assert [p.id for p in listed] == [ours.id]
    assert len(warnings) == 2 and all("no run of this tool wrote it" in w for w in warnings)
    for forged in ("f-planted", "f-relabelled"):
        with pytest.raises(KeyError):
            ledger.approve(home, forged)
    assert ledger.approve(home, ours.id).id == ours.id
