"""Memory: approved facts about metrics and recall of past investigations (issue 14).

The run sees memory through two calls only: `recall` when a run is created (what enters its
context, saved in its state so a resume sees the same) and `remember` after it ends. People
approve facts and prune memories through `api` (the CLI and the notebook).
"""

from investigator.memory.hooks import load_recall_model, recall, remember
from investigator.memory.models import ApprovedFact, FactProposal, MemoryContext, Recalled

__all__ = [
    "ApprovedFact",
    "FactProposal",
    "MemoryContext",
    "Recalled",
    "load_recall_model",
    "recall",
    "remember",
]
