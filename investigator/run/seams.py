"""The seams of the loop: the kernel that runs code and the planner that decides. Each has a real
implementation and a fake that tests use (`investigator.testing`). `investigator.protocols` lists
every seam of the package, these two among them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from investigator.run.compress import Compressed
    from investigator.run.context import Context
    from investigator.run.decision import Decision
    from investigator.run.tokens import Usage
    from sandbox.models import ExecResult


@runtime_checkable
class Kernel(Protocol):
    """A persistent code-execution session: variables survive between `execute` calls."""

    def start(self) -> None:
        """Start (or connect to) the kernel; calling it again on a started kernel does nothing."""
        ...

    def execute(self, code: str, timeout: float = 60.0) -> ExecResult: ...

    def list_files(self) -> list[str]: ...

    def data_path(self, host_path: str) -> str:
        """Where a host data file is visible from inside the kernel (mounted or copied)."""
        ...

    def shutdown(self) -> None: ...


@runtime_checkable
class Planner(Protocol):
    """Decides the next step from the bounded context alone (no chat history)."""

    name: str

    def decide(self, context: Context) -> Decision: ...

    def compress(self, decision: Decision, result: ExecResult, structured: Compressed) -> Compressed:
        """Turn a step's output into a finding; `structured` is the library's own summary."""
        ...

    def take_usage(self) -> Usage:
        """Tokens used since the last call, per phase (decide_in, compress_out, ...). The loop
        adds them to the run's state, which owns the count and checks the budget."""
        ...
