"""The run's two calls into memory (placeholders until the ledger and the store land)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from investigator.memory.models import MemoryContext

if TYPE_CHECKING:
    from investigator.analysis.spec import AnalysisSpec
    from investigator.config import Settings
    from investigator.report.model import Report
    from investigator.run.state import RunState


def recall(settings: Settings, spec: AnalysisSpec) -> MemoryContext:
    """Approved facts relevant to this metric and its dimensions, and relevant past memories."""
    return MemoryContext()


def remember(state: RunState, report: Report, settings: Settings) -> list[str]:
    """Store a finished run's memories and its proposed facts; returns warnings (never raises)."""
    return []
