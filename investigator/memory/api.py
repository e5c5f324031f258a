"""What people call, from the CLI or a notebook: review proposed facts, search and prune memory.

This is the only way to an approved fact: planners and the loop import nothing from here.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from investigator.memory import ledger
from investigator.memory.models import ApprovedFact, FactProposal, NewMemory, StoredMemory


class FactsView(BaseModel):
    approved: list[ApprovedFact] = Field(default_factory=list)
    pending: list[FactProposal] = Field(default_factory=list)
    unapproved: list[ApprovedFact] = Field(
        default_factory=list, description="ledger lines with no valid approval mark: unused until approved"
    )
    warnings: list[str] = Field(default_factory=list)


def home_of(home: Path | str | None) -> Path:
    """The memory folder asked for, else the settings' (`INVESTIGATOR_HOME`, `.investigator`)."""
    if home is not None:
        return Path(home)
    from investigator.config import load_settings

    return load_settings().home


def list_facts(home: Path | str | None = None) -> FactsView:
    h = home_of(home)
    facts, unchecked, w1 = ledger.read(h)
    waiting, w2 = ledger.pending(h)
    return FactsView(approved=facts, pending=waiting, unapproved=unchecked, warnings=w1 + w2)


def approve_fact(fact_id: str, topic: str | None = None, home: Path | str | None = None) -> ApprovedFact:
    """Promote a pending fact (or an unapproved ledger line) to an approved one; it enters the
    context of every later relevant run."""
    h = home_of(home)
    fact = ledger.approve(h, fact_id, topic)
    _decided(h, fact, "approved")
    return fact


def reject_fact(fact_id: str, home: Path | str | None = None) -> FactProposal:
    """Reject a pending fact: it never enters a context and is not proposed again."""
    h = home_of(home)
    proposal = ledger.reject(h, fact_id)
    _decided(h, proposal, "rejected")
    return proposal


def _decided(home: Path, fact: ApprovedFact, verdict: str) -> None:
    """A person's decision about a run's proposal is a memory of that run (best effort)."""
    if not fact.run_id:
        return
    try:
        from investigator.memory.embed import default_embedder
        from investigator.memory.store import MemoryStore

        memory = NewMemory(
            type="decision",
            text=f"a person {verdict} the fact {fact.id}: {fact.text}",
            run_id=fact.run_id,
            metric=fact.metrics[0] if len(fact.metrics) == 1 else None,
            segment=fact.segment,
        )
        MemoryStore(home, default_embedder()).add([memory])
    except Exception:  # the decision itself is on disk already; its memory is a bonus
        pass


def search_memory(
    text: str, k: int = 10, metric: str | None = None, home: Path | str | None = None
) -> list[StoredMemory]:
    """Memories nearest `text` (any similarity), most relevant first; a search is not a use."""
    from investigator.memory.embed import default_embedder
    from investigator.memory.store import MemoryStore

    return MemoryStore(home_of(home), default_embedder()).search(
        text, k, metric, min_similarity=-1.0, latest_only=False
    )


def forget_run(run_id: str, home: Path | str | None = None) -> int:
    from investigator.memory.embed import default_embedder
    from investigator.memory.store import MemoryStore

    return MemoryStore(home_of(home), default_embedder()).forget(run_id)


def compact_memory(older_than_days: float = 30, home: Path | str | None = None) -> tuple[int, int]:
    """Summarise memories older than this into chunks; returns (summarised, chunks made)."""
    from investigator.memory.embed import default_embedder
    from investigator.memory.store import MemoryStore

    return MemoryStore(home_of(home), default_embedder()).compact(older_than_days)
