"""Every seam of the package, listed in one place. Each is a `Protocol` declared beside its real
implementations and has a fake in `investigator.testing`:

- `Kernel` (`run/seams.py`): runs code, variables kept between calls; `kernels.mcp.McpKernel`,
  `kernels.inprocess.InProcessKernel`.
- `Planner` (`run/seams.py`): decides the next step from the bounded context; `planners/`.
- `DataSource` (`sources/base.py`): where a metric's rows live; `sources.files`, `sources.warehouse`.
- `Embedder` (`memory/embed.py`): texts to vectors for recall; `memory.embed.WordLlamaEmbedder`.
- `Notifier` (`triage/notify.py`): delivers triage's message; `triage.notify.AppriseNotifier`.
- `Runs` (`investigations.py`): starts and continues investigations for the MCP tools;
  `investigations.LocalRuns` (`runner`'s verbs).

This module is for people writing an implementation; the package's own modules import each seam
from where it is declared (`tests/test_architecture.py` keeps this one beside the front doors).
"""

from investigator.investigations import Runs
from investigator.memory.embed import Embedder
from investigator.run.seams import Kernel, Planner
from investigator.sources.base import DataSource
from investigator.triage.notify import Notifier

__all__ = ["DataSource", "Embedder", "Kernel", "Notifier", "Planner", "Runs"]
