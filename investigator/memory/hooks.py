"""The run's two calls into memory: `recall` when a run is created, `remember` when it ends.

Neither ever fails a run: trouble with the memory folder becomes a warning.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from investigator.memory import ledger
from investigator.memory.extract import memories_of
from investigator.memory.home import DB, ensure_home
from investigator.memory.models import MemoryContext, Recalled

if TYPE_CHECKING:
    from investigator.analysis.spec import AnalysisSpec
    from investigator.config import Settings
    from investigator.memory.embed import Embedder
    from investigator.report.model import Report
    from investigator.run.state import RunState

MAX_FACTS = 30  # the context's budget cuts further; this bounds the work of building it
RECALL_K = 5


def recall_query(spec: AnalysisSpec) -> str:
    """What a run asks recall: its metric, its window and the dimensions it can break down by."""
    return (
        f"{spec.metric} {spec.current.start}..{spec.current.end}: why {spec.metric} moved; "
        f"causes in {', '.join(spec.dimensions) or 'the whole metric'}"
    )


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
                recall_query(spec), RECALL_K, spec.metric, spec.dimensions, source=source, alias=alias
            )
            store.touch([m.id for m in found])
            recalled = [
                Recalled(run_id=m.run_id, text=m.text, score=m.score or 0.0, kind=m.kind,
                         segment=m.segment, created=m.created)
                for m in found
            ]  # fmt: skip
    except Exception as e:  # memory is a bonus: the run goes on without it
        warnings.append(f"memory: recall skipped ({type(e).__name__}: {e})")
    return MemoryContext(facts=facts, recalled=recalled, warnings=warnings, source=source, source_alias=alias)


def remember(
    state: RunState, report: Report, settings: Settings, embedder: Embedder | None = None
) -> list[str]:
    """Store a finished run's memories and its proposed facts; returns warnings (never raises)."""
    warnings: list[str] = []
    try:
        home, warnings = ensure_home(settings.home)
        if state.conclusion is not None:
            for proposal in state.conclusion.proposed_facts:
                ledger.propose(home, proposal.model_copy(update={"run_id": state.run_id}))
        memories = memories_of(state, report)
        if memories:
            from investigator.memory.embed import default_embedder
            from investigator.memory.store import MemoryStore

            store = MemoryStore(home, embedder or default_embedder())
            warnings += store.warnings
            store.add(memories, replace=True)
    except Exception as e:
        warnings.append(f"memory: this run was not remembered ({type(e).__name__}: {e})")
    return warnings
