"""Memory: approved facts about metrics and recall of past investigations (issue 14).

The run sees memory through two calls only: `recall` when a run is created (what enters its
context, saved in its state so a resume sees the same; asked again with what it found when it has
concluded, for the report's "Seen before") and `keep` after it ends. Memory knows neither the run nor
the report: `investigator.remembering` works out from them what to ask and what to keep. People
approve facts and prune memories through `api` (the CLI and the notebook).
"""

from investigator.memory.hooks import keep, load_recall_model, recall
from investigator.memory.models import ApprovedFact, FactProposal, MemoryContext, Recalled

__all__ = [
    "ApprovedFact",
    "FactProposal",
    "MemoryContext",
    "Recalled",
    "keep",
    "load_recall_model",
    "recall",
]
