"""The `Runs` seam: starting and continuing investigations for a door that runs them on a caller's
behalf (the MCP tools). `LocalRuns` is the real one (`runner`'s verbs, imported at the first call so
a server answers before pandas loads); `investigator.testing.FakeRuns` answers without a run."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from investigator.config import Settings
    from investigator.factories import Hooks, LLMChoice
    from investigator.report.model import Report
    from investigator.request import Request

__all__ = ["LocalRuns", "Runs"]


class Runs(Protocol):
    """Starts (`investigate`), resumes and continues (`continue_run`: `iterations` more steps) runs."""

    def investigate(
        self, request: Request, settings: Settings, hooks: Hooks | None = None, llm: LLMChoice | None = None
    ) -> Report: ...

    def resume(self, run_id: str, settings: Settings, hooks: Hooks | None = None) -> Report: ...

    def continue_run(
        self, run_id: str, settings: Settings, iterations: int, hooks: Hooks | None = None
    ) -> Report: ...


class LocalRuns:
    """`Runs` by `runner`'s verbs, each run with a kernel of its own (never one kept from another
    call: a server's calls run at once)."""

    def investigate(
        self, request: Request, settings: Settings, hooks: Hooks | None = None, llm: LLMChoice | None = None
    ) -> Report:
        from investigator.runner import investigate

        return investigate(request, settings, hooks, llm=llm, reuse_kernel=False)

    def resume(self, run_id: str, settings: Settings, hooks: Hooks | None = None) -> Report:
        from investigator.runner import resume

        return resume(run_id, settings, hooks)

    def continue_run(
        self, run_id: str, settings: Settings, iterations: int, hooks: Hooks | None = None
    ) -> Report:
        from investigator.runner import continue_run

        return continue_run(run_id, settings, iterations, hooks)
