"""Memory: approved facts about metrics and recall of past investigations (issue 14).

The run sees memory through three calls only: `recall` when a run is created (what enters its
context, saved in its state so a resume sees the same), `recognise` when it has concluded (recall
asked again with what it found, for the report's "Seen before") and `remember` after it ends. People
approve facts and prune memories through `api` (the CLI and the notebook).
"""

from investigator.memory.hooks import load_recall_model, recall, recognise, remember
from investigator.memory.models import ApprovedFact, FactProposal, MemoryContext, Recalled

__all__ = [
    "ApprovedFact",
    "FactProposal",
    "MemoryContext",
    "Recalled",
    "load_recall_model",
    "recall",
    "recognise",
    "remember",
]
