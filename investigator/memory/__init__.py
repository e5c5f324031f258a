"""Memory: approved facts about metrics and recall of past investigations (issue 14).

The run sees memory through two calls only: `recall` when a run is created (what enters its
context, saved in its state so a resume sees the same) and `remember` after it ends.
"""

from investigator.memory.hooks import recall, remember
from investigator.memory.models import MemoryContext

__all__ = ["MemoryContext", "recall", "remember"]
