"""Memory's two doors for a run: `recall` when a run is created, `keep` when it ends (what a run
keeps is worked out from its state in `investigator.remembering`, which calls both).

Neither ever fails a run: trouble with the memory folder becomes a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from investigator.fmt import seg
from investigator.memory import ledger
from investigator.memory.home import DB, ensure_home
from investigator.memory.models import FactProposal, Lead, MemoryContext, NewMemory, Recalled

if TYPE_CHECKING:
    from investigator.analysis.spec import AnalysisSpec
    from investigator.config import Settings
    from investigator.memory.embed import Embedder

MAX_FACTS = 30  # the context's budget cuts further; this bounds the work of building it
RECALL_K = 5


def recall_query(spec: AnalysisSpec, leads: list[Lead] | None = None) -> str:
    """What a run asks recall: before it has found anything, its metric, window and dimensions;
    once it has, what it found (worded as a memory of it is: kind, segment, which way)."""
    if leads:
        found = "; ".join(
            f"{lead.kind or 'a change'} in {seg(lead.segment) if lead.segment else 'the whole metric'}"
            f" ({_WAY.get(lead.direction or '', 'moved')})"
            for lead in leads
        )
        return f"{spec.metric}: {found}"
    return (
        f"{spec.metric} {spec.current.start}..{spec.current.end}: why {spec.metric} moved; "
        f"causes in {', '.join(spec.dimensions) or 'the whole metric'}"
    )


_WAY = {"down": "a drop, fell", "up": "a rise, grew"}


def load_recall_model(settings: Settings) -> None:
    """Start loading the offline recall model (a few tenths of a second) in the background when
    there are memories to search, so that a run's `recall` finds it loaded: the run checks its
    data meanwhile. Trouble here is `recall`'s to report, when it loads the model itself."""
    if not (settings.home / DB).is_file():
        return
    from concurrent.futures import ThreadPoolExecutor

    from investigator.memory.embed import WordLlamaEmbedder

    pool = ThreadPoolExecutor(1, thread_name_prefix="recall-model")
    pool.submit(WordLlamaEmbedder.model)  # one load per process: `recall` waits for this one
    pool.shutdown(wait=False)


def recall(
    settings: Settings,
    spec: AnalysisSpec,
    embedder: Embedder | None = None,
    source: str | None = None,
    alias: str | None = None,
    leads: list[Lead] | None = None,
) -> MemoryContext:
    """Approved facts relevant to this metric and its dimensions, and relevant past memories of
    this source (`source_key`) or of one named alike (`alias`, metrics.yaml `source:`): another
    table's memories are another data's. With no source known, nothing is recalled."""
    warnings: list[str] = []
    facts, recalled = [], []
    try:
        home, warnings = ensure_home(settings.home)
        every, more = ledger.approved(home)
        warnings += more
        facts = ledger.relevant(every, spec.metric, spec.dimensions)[:MAX_FACTS]
        if source is not None and (home / DB).exists():  # nothing stored yet: no model to load
            from investigator.memory.embed import default_embedder
            from investigator.memory.store import MemoryStore

            store = MemoryStore(home, embedder or default_embedder())
            warnings += store.warnings
            found = store.search(
                recall_query(spec, leads), RECALL_K, spec.metric, spec.dimensions, source=source,
                alias=alias, leads=leads,
            )  # fmt: skip
            store.touch([m.id for m in found])
            recalled = [
                Recalled(run_id=m.run_id, text=m.text, score=m.score or 0.0, kind=m.kind,
                         segment=m.segment, direction=m.direction, created=m.created)
                for m in found
            ]  # fmt: skip
    except Exception as e:  # memory is a bonus: the run goes on without it
        warnings.append(f"memory: recall skipped ({type(e).__name__}: {e})")
    return MemoryContext(facts=facts, recalled=recalled, warnings=warnings, source=source, source_alias=alias)


def keep(
    settings: Settings,
    memories: list[NewMemory],
    proposals: list[FactProposal] | None = None,
    embedder: Embedder | None = None,
) -> list[str]:
    """Store a finished run's memories and its proposed facts; returns warnings (never raises)."""
    warnings: list[str] = []
    try:
        home, warnings = ensure_home(settings.home)
        for proposal in proposals or []:
            ledger.propose(home, proposal)
        if memories:
            from investigator.memory.embed import default_embedder
            from investigator.memory.store import MemoryStore

            store = MemoryStore(home, embedder or default_embedder())
            warnings += store.warnings
            store.add(memories, replace=True)
    except Exception as e:
        warnings.append(f"memory: this run was not remembered ({type(e).__name__}: {e})")
    return warnings
