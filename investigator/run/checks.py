"""Every claimed cause is recomputed before a conclusion is accepted — on the host, from the
engine's aggregates of the run's data, where code the planner wrote cannot reach the check.

The kernel is not asked: code run there can rebind any name, so a check run in its namespace could
be talked around. A check that cannot run refuses the conclusion; it never accepts by default.

Two rules hold over the list as a whole (`listed_once_and_with_the_change`): a cause listed twice is
not verified twice (the second is refused), and a segment that moved against the change is a
verified cause only as the offset of a listed cause that moved with it (a model named the segment
that rose as the cause of a fall).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, NamedTuple, TypeVar

import pandas as pd

from investigator.analysis.causes import RootCause
from investigator.analysis.contributions import SegmentChange, segment_table
from investigator.analysis.queries import daily_totals, period_cube
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.table import Table, TableAggregates
from investigator.analysis.verify import CauseCheck, Verification
from investigator.kinds import KINDS
from investigator.kinds.base import CheckData
from investigator.kinds.verify import verify_causes
from investigator.memory.models import ApprovedFact
from investigator.run.evidence import Evidence
from investigator.run.late_facts import measurable
from investigator.sources.base import DataSource

if TYPE_CHECKING:
    from investigator.config import RunSettings
    from investigator.run.state import RunState

T = TypeVar("T")


class Aggregates(NamedTuple):
    """What the engine computed of a run's data for the check: the report's charts reuse it."""

    spec: AnalysisSpec
    table: Table
    daily: pd.DataFrame
    cube: pd.DataFrame


class CauseChecker:
    """Recomputes claimed causes for one run; the aggregates are built once, on first use or
    ahead of it (`start`), and so is what a kind's check needs whatever the claim (`ahead`).

    The engine is used by one thread at a time (`_engine`): a background computation and the
    check itself never query the data at once."""

    def __init__(
        self, source: DataSource, spec: AnalysisSpec, tolerance: float, facts: Sequence[ApprovedFact] = ()
    ) -> None:
        self.facts = list(facts)  # approved late-data facts relabel drops: checked as the drops
        self.source, self.spec, self.tolerance = source, spec, tolerance
        self._data: TableAggregates | None = None
        self._pending: Future[TableAggregates] | None = None
        self._engine = threading.RLock()
        self._prepared: dict[str, object] = {}  # `kinds.base.prepared`: one run's, kept across checks

    def start(self) -> CauseChecker:
        """Compute the aggregates in a background thread from now on: the host mostly waits (for
        the kernel to start, then for its analyses) while the engine reads the data once more."""
        if self._data is None and self._pending is None:
            self._pending = _background(self._compute)
        return self

    def ahead(self, evidence: Evidence, code: str) -> None:
        """The kernel is about to run `code`, with `evidence` in: for each kind the conclusion may
        claim (`Kind.starts_ahead`: by default, the kernel is about to run its test), start
        computing in the background what its check needs whatever the claim (`Kind.ahead`), so the
        conclusion does not wait for it. Code no kind tests starts nothing of theirs."""
        for kind in KINDS:
            if not kind.starts_ahead(evidence, code):
                continue
            for key, make in kind.ahead.items():
                if key not in self._prepared:
                    self.start()
                    self._prepared[key] = _background(functools.partial(self._make, make))

    def _make(self, make: Callable[[CheckData], object]) -> object:
        with self._engine:
            table, daily, cube = self.aggregates()
            return make(CheckData(table, daily, cube, self.spec, self.tolerance, {}))

    def aggregates(self) -> TableAggregates:
        """The table, the per-period totals and the period cube, computed by the engine once."""
        with self._engine:
            if self._data is None:
                pending, self._pending = self._pending, None
                self._data = self._result(pending) if pending is not None else self._compute()
            return self._data

    def _compute(self) -> TableAggregates:
        table = self.source.open(self.spec.time_column)
        return TableAggregates(table, daily_totals(table, self.spec), period_cube(table, self.spec))

    def _result(self, pending: Future[TableAggregates]) -> TableAggregates:
        """What the background thread computed; if it failed, computed again here, so the error
        the caller sees (and refuses the conclusion over) is this thread's own."""
        try:
            return pending.result()
        except Exception:
            return self._compute()

    def _settle(self) -> None:
        """Wait for what was started ahead: the engine is its own until it is done."""
        wait([f for f in list(self._prepared.values()) if isinstance(f, Future)])

    def computed(self) -> Aggregates | None:
        """The aggregates if they were computed (every finished run computes them), else None.
        Nothing of this checker uses the engine any more: the caller may."""
        self._settle()
        if self._data is None:
            return None
        return Aggregates(self.spec, *self._data)

    def check(self, causes: list[RootCause]) -> Verification:
        """One check per cause; raises if the data cannot be read (the caller refuses then)."""
        table, daily, cube = self.aggregates()
        causes = [measurable(c, self.facts, self.spec) for c in causes]
        self._settle()
        with self._engine:
            checked = verify_causes(
                table, daily, cube, self.spec, causes, tolerance=self.tolerance, cache=self._prepared
            )
        return listed_once_and_with_the_change(checked, causes)

    def segment_table(self, n: int = 10) -> list[SegmentChange]:
        """The ranked table of segment changes for the report (empty if the data cannot be read:
        the report still stands without it)."""
        try:
            return segment_table(self.aggregates().cube, self.spec, n)
        except Exception:
            return []


SHARED = ("segment_change", "rate_change")  # causes whose measured number is a share of the change


def listed_once_and_with_the_change(checked: Verification, causes: list[RootCause]) -> Verification:
    """`checked` with two more refusals: a cause (kind, segment, detail, driver) listed a second time, and a
    segment whose measured share is against the change when no listed cause that held moved with
    it (an offset needs something it offsets)."""
    seen: dict[tuple[object, ...], int] = {}
    offsets = any(c.ok and c.kind in SHARED and (c.measured or 0) > 0 for c in checked.checks)
    out: list[CauseCheck] = []
    for check, cause in zip(checked.checks, causes, strict=True):
        key = (cause.kind, tuple(sorted(cause.segment.items())), cause.detail, cause.driver)
        first = seen.setdefault(key, check.index)
        reason = None
        if first != check.index:
            reason = f"listed twice (as cause {first + 1} too): a cause is verified once"
        elif check.ok and check.kind in SHARED and (check.measured or 0) < 0 and not offsets:
            reason = (
                f"it moved against the change ({check.measured:+.0%} of it) and no listed cause moved "
                "with the change for it to offset"
            )
        out.append(check if reason is None else check.model_copy(update={"ok": False, "reason": reason}))
    return Verification(ok=all(c.ok for c in out), checks=out)


def refusal(checked: Verification) -> str | None:
    """Why a conclusion must be refused, or None when every cause held."""
    failed = [f"cause {c.index + 1} ({c.kind}): {c.reason}" for c in checked.checks if not c.ok]
    return ("Conclusion refused, verification failed: " + "; ".join(failed)) if failed else None


def _background(fn: Callable[[], T]) -> Future[T]:
    """`fn()` in a thread of its own, which ends with it."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="cause-check")
    try:
        return pool.submit(fn)
    finally:
        pool.shutdown(wait=False)


def cause_checker(state: RunState, settings: RunSettings) -> CauseChecker:
    """The host's check of a run's causes, on the run's own data file (the rows its filter keeps)."""
    from investigator.sources.filters import run_source

    return CauseChecker(
        run_source(state.data_path, state.spec), state.spec, settings.verify_tolerance, state.memory.facts
    )
