"""A move of the whole series: a metric with no dimension to split it by moved, and the whole
metric is the segment. Only for single series; a data problem or a season that explains the move
leaves nothing to it."""

from __future__ import annotations

from investigator.analysis.causes import RootCause, finite
from investigator.analysis.queries import BASE, CUR
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.verify import size_problem
from investigator.fmt import pair, pct
from investigator.kinds import data_quality, seasonality
from investigator.kinds.base import Case, CheckData, Checked, Kind
from investigator.kinds.common import too_short


def _decide(case: Case) -> list[RootCause]:
    m, spec = case.evidence.movement, case.spec
    if spec.dimensions or not case.evidence.significant or m is None or not m.change:
        return []
    if data_quality.explains_all(case) or seasonality.seasonal(case):
        return []
    how = f"z={m.z:+.1f} against its recent history" if m.z is not None else too_short(m) + " to score it"
    return [
        RootCause(
            kind="segment_change", segment={}, contribution=1.0, change=finite(m.change),
            evidence=f"{spec.metric}: {' -> '.join(pair(m.baseline, m.current))} ({pct(m.change_pct)}, "
            f"{how}); the data has no dimension to split it by",
        )
    ]  # fmt: skip


def _owns(c: RootCause, spec: AnalysisSpec) -> bool:
    return c.kind == "segment_change" and not c.segment and not spec.dimensions


def _check(d: CheckData, c: RootCause) -> Checked:
    """The whole metric carries all of the change, when there is a change (a NaN is none)."""
    n = d.spec.numerator
    change = finite(float(d.cube[CUR + n].sum() - d.cube[BASE + n].sum()))
    measured = 1.0 if change else None
    return Checked(size_problem(c.contribution, measured, d.tolerance), measured)


KIND = Kind(
    name="whole_series",
    causes=("segment_change",),
    decide=_decide,
    owns=_owns,
    confirms={},
    words=lambda c, e: "a move of the whole series",
    check=_check,
)
