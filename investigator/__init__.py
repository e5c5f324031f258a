"""investigator: explains why a metric moved, with a hypothesis-driven loop over your data.

    from investigator import investigate
    inv = investigate(df, metric="revenue", window="7d")

In IPython or Jupyter: `%load_ext investigator`, then `%investigate --metric revenue --window 7d`.
Importing the package stays cheap: the API loads on first use, IPython only with the extension.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from investigator.version import __version__

if TYPE_CHECKING:
    from investigator.front.notebook import Investigation, investigate
    from investigator.memory.api import (
        approve_fact,
        compact_memory,
        forget_run,
        list_facts,
        reject_fact,
        search_memory,
    )

MEMORY = ("list_facts", "approve_fact", "reject_fact", "search_memory", "forget_run", "compact_memory")
__all__ = [
    "Investigation",
    "__version__",
    "approve_fact",
    "compact_memory",
    "forget_run",
    "investigate",
    "list_facts",
    "load_ipython_extension",
    "reject_fact",
    "search_memory",
]


def __getattr__(name: str) -> Any:
    if name in ("investigate", "Investigation"):
        from investigator.front import notebook

        return getattr(notebook, name)
    if name in MEMORY:  # the same review a person does with `investigate facts ...`
        from investigator.memory import api

        return getattr(api, name)
    raise AttributeError(f"module 'investigator' has no attribute {name!r}")


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext investigator`: registers `%investigate` and `%%investigate`."""
    from investigator.front.magics import load

    load(ipython)
