"""The code the host sends to the kernel to prepare a run and to check a conclusion.

The trail notebook replays the same code, so what a person re-runs is what the loop ran.
"""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from investigator.analysis.causes import RootCause
from investigator.analysis.spec import AnalysisSpec
from investigator.errors import KernelError
from investigator.run.compress import compress
from investigator.run.decision import Decision, DecisionType
from investigator.sources.extract import EXTRACT_FILE

if TYPE_CHECKING:
    from investigator.config import RunSettings
    from investigator.run.seams import Kernel
    from investigator.run.state import RunState
    from sandbox.models import ExecResult

SETUP = """\
from investigator.analysis import *
spec = AnalysisSpec.model_validate_json({spec!r})
table = open_table({path!r}, spec.time_column{where})
daily = daily_totals(table, spec)
history = dimension_history(table, spec)
cube = period_cube(table, spec, labels=history.labels)
print(f"loaded {{spec.count_label(len(daily))}} of {{spec.metric}} and a cube of {{len(cube)}} segments")
emit(movement(daily, spec))
"""
EXTRACT_NOTE = """\
print("table is the aggregated extract the data's engine computed (one row per date and segment, "
      "measures summed, rows in __rows): use the analysis functions, or table['__rows'].sum() "
      "for row counts; the raw rows stay in the database")
"""
VERIFY = (
    "from investigator.kinds.verify import verify_causes\n"
    "emit(verify_causes(table, daily, cube, spec, {causes!r}, tolerance={tolerance!r}))"
)
RELOADED = "The kernel died and was restarted; the data was reloaded (table, daily, history, cube, spec)."
RESUMED = (
    "This run was resumed in a new kernel: the data was loaded again (table, daily, history, cube, "
    "spec); variables that earlier steps made are gone, so compute again what you still need."
)


def setup_code(spec: AnalysisSpec, data_path: str) -> str:
    """Load the data where the kernel sees it, build the per-period totals (`daily`: one row per
    day, week, month, ... of the data's grain), each dimension's values per period (`history`,
    read by the quality checks and the segments' own histories) and the period cube, and measure
    the movement (iteration 0). A warehouse run's data is its extract, and the code says so to the
    planner. A run's filter (`spec.filter`, validated data) is rebuilt by `open_table` from its
    fields; an extract holds only the filtered rows already, so it is read as it is."""
    extract = PurePath(data_path).name == EXTRACT_FILE
    where = ", where=spec.filter" if spec.filter is not None and not extract else ""
    code = SETUP.format(spec=spec.model_dump_json(), path=data_path, where=where)
    return code + EXTRACT_NOTE if extract else code


def verify_code(causes: list[RootCause], tolerance: float) -> str:
    """Recompute every claimed cause from the data."""
    return VERIFY.format(causes=[c.model_dump(mode="json") for c in causes], tolerance=tolerance)


def load_data(kernel: Kernel, state: RunState, settings: RunSettings) -> ExecResult:
    """Load the data (the step most likely to run out of memory); a kernel that died doing it
    was restarted by the sandbox and gets one more try before the run gives up."""
    code = setup_code(state.spec, kernel.data_path(state.data_path))
    timeout = max(settings.execution_timeout_s, 120)
    result = kernel.execute(code, timeout=timeout)
    if not result.ok and result.restarted:
        result = kernel.execute(code, timeout=timeout)
        if not result.ok and result.restarted:
            raise KernelError(
                "the kernel died twice while loading the data, most likely out of memory (the Docker "
                "sandbox allows 2 GiB unless its server is started with --max-memory): use fewer "
                "--dimensions or a shorter history, or give the sandbox more memory; the run is saved"
            )
    if not result.ok:
        detail = f"{result.error.name}: {result.error.value}" if result.error else "no output"
        raise KernelError(f"could not load the data in the kernel ({detail})")
    return result


def prepare(kernel: Kernel, state: RunState, settings: RunSettings) -> RunState:
    """Start the kernel and load the data. A resumed run goes on from its saved evidence: the
    code of earlier steps is never run again (a run folder is data, and the code in it may be a
    model's, written under instructions planted in the data), so the planner is told that
    the new kernel holds only the data."""
    kernel.start()
    result = load_data(kernel, state, settings)
    if state.iteration == 0 and not state.findings:
        setup = Decision(type=DecisionType.ANALYZE, rationale="Load the data", code="setup")
        compressed = compress(setup, result)
        return state.set_up(compressed.summary, compressed.results, result.text())
    return state if state.done else state.resumed(RESUMED)
