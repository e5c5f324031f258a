"""The data load is the step most likely to run out of memory: a kernel that dies doing it gets
one more try, and twice is one line that names the memory limit."""

from __future__ import annotations

from pathlib import Path

import pytest

from investigator.config import load_settings
from investigator.errors import KernelError
from investigator.kernels.inprocess import InProcessKernel
from investigator.planners.offline import OfflinePlanner
from investigator.request import Request
from investigator.runner import run_loop
from investigator.runs import new_run
from sandbox.models import ExecError, ExecResult

from ..conftest import write_synth

DIED = ExecResult(ok=False, restarted=True, error=ExecError(name="KernelDied", value="the kernel died"))


class DiesLoading(InProcessKernel):
    """A real in-process kernel whose first `deaths` data loads die (as an OOM kill would)."""

    def __init__(self, deaths: int) -> None:
        super().__init__()
        self.deaths, self.loads = deaths, 0

    def execute(self, code: str, timeout: float = 60.0) -> ExecResult:
        if "open_table(" in code:
            self.loads += 1
            if self.loads <= self.deaths:
                self.namespace.clear()
                return DIED
        return super().execute(code, timeout)


def _run(tmp_path: Path, kernel: InProcessKernel) -> object:
    data, _ = write_synth(tmp_path, "segment_change", seed=2, segment={"channel": "email"}, factor=0.5)
    settings = load_settings(runs_dir=tmp_path / "runs")
    state = new_run(Request(metric="revenue", data=str(data)), data, settings, "offline")
    return run_loop(state, settings, OfflinePlanner(), kernel)


def test_a_kernel_that_died_loading_the_data_is_given_one_more_try(tmp_path: Path) -> None:
    kernel = DiesLoading(deaths=1)
    report = _run(tmp_path, kernel)
    assert kernel.loads == 2 and report.root_causes[0].segment == {"channel": "email"}  # type: ignore[attr-defined]


def test_twice_is_one_line_naming_the_memory_limit(tmp_path: Path) -> None:
    with pytest.raises(KernelError, match="died twice while loading the data, most likely out of memory"):
        _run(tmp_path, DiesLoading(deaths=2))
