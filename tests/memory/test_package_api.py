"""The notebook's review of proposed facts: the same calls as `investigate facts ...`."""

from __future__ import annotations

from pathlib import Path

import pytest

import investigator
from investigator.memory.ledger import propose
from investigator.memory.models import FactProposal


def test_a_proposal_is_approved_from_python_and_listed(tmp_path: Path) -> None:
    proposal = FactProposal(
        id="", topic="revenue", text="Affiliate lands two days late.", kind="late_data",
        segment={"channel": "affiliate"}, lag_days=2, metrics=["revenue"], run_id="r1",
    )  # fmt: skip
    assert propose(tmp_path, proposal)
    (pending,) = investigator.list_facts(tmp_path).pending
    assert investigator.list_facts(tmp_path).approved == []
    approved = investigator.approve_fact(pending.id, home=tmp_path)
    assert approved.segment == {"channel": "affiliate"} and approved.lag_days == 2
    view = investigator.list_facts(tmp_path)
    assert [f.id for f in view.approved] == [pending.id] and view.pending == []
    with pytest.raises(KeyError, match="no pending fact"):
        investigator.reject_fact(pending.id, home=tmp_path)
