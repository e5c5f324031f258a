"""A driver of the metric's tree moved: revenue = sessions x conversion x aov, and the first
question about revenue is which of them moved ("conversion fell; traffic held").

It applies to a metric whose definition names its drivers (`drivers:` in `configs/metrics.yaml`).
The split is `analysis.drivers.driver_split` (log-mean: the parts add up to the change). It is a
second axis, not a rival story: a segment says where the move happened, a driver what moved there.
So it comes after the segment kinds and before "no change", and only on a move to explain, with no
data problem named: copied or missing rows are in every driver's sums, and a split of them would
blame traffic for a reload.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.drivers import DriverPart, DriverSplit, driver_split, tree_text
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.verify import size_problem
from investigator.fmt import num, pct, share
from investigator.kinds import data_quality
from investigator.kinds.base import Case, CheckData, Checked, Kind, Reading, Test, prepared
from investigator.kinds.common import share_of, to_explain
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.hypotheses import HypothesisKind, Status, Update

DRIVES = 0.25  # a driver carrying this share of the change, the change's way, is a cause
HELD = 0.1  # a driver carrying less than this (either way) held


def _hypotheses(spec: AnalysisSpec) -> list[tuple[HypothesisKind, str]]:
    if not spec.drivers:
        return []
    return [
        ("drivers", f"One driver of {spec.metric} = {tree_text(spec)} carries the change; the others held.")
    ]


def drivers_moved(split: DriverSplit) -> list[DriverPart]:
    """The drivers that carry the change: `DRIVES` of it or more, its way, and moved beyond their
    own usual variation (or with too little history to tell), largest first. A driver that always
    swings this much carries a part of the change, but it is not what moved."""
    moved = (p for p in split.parts if (p.share or 0) >= DRIVES and p.usual is not True)
    return sorted(moved, key=lambda p: -(p.share or 0))


def _usual(p: DriverPart) -> str:
    """ "; beyond its usual moves, z -4.1": the driver's move against its own history."""
    if p.usual is None or p.z is None:
        return ""
    return f"; within its usual moves, z {p.z:+.1f}" if p.usual else f"; beyond its usual moves, z {p.z:+.1f}"


def described(split: DriverSplit, moved: list[DriverPart]) -> str:
    """ "conversion 0.062 -> 0.050 (-19.4%, 95% of the change); sessions (-0.5%) and aov (+0.3%)
    held": the drivers that moved with their numbers, then the rest."""
    said = [f"{p.name} {num(p.baseline)} -> {num(p.current)} ({pct(p.change_pct)}, {share(p.share or 0)} "
            f"of the change{_usual(p)})" for p in moved]  # fmt: skip
    rest = [p for p in split.parts if p.name not in {m.name for m in moved}]
    held = [f"{p.name} ({pct(p.change_pct)})" for p in rest if abs(p.share or 0) < HELD]
    also = [f"{p.name} ({pct(p.change_pct)}, {share(p.share or 0)}{_usual(p)})" for p in rest
            if (p.share or 0) >= HELD]  # fmt: skip
    against = [
        f"{p.name} ({pct(p.change_pct)}, {share(-(p.share or 0))})" for p in rest if (p.share or 0) <= -HELD
    ]
    tail = (
        (f"; {' and '.join(held)} held" if held else "")
        + (f"; {' and '.join(also)} moved with it" if also else "")
        + (f"; {' and '.join(against)} moved the other way" if against else "")
    )
    return "; ".join(said) + tail


def _read(p: AnalysisResult) -> Reading | None:
    if not isinstance(p, DriverSplit):
        return None
    if not p.split:
        why = p.reason or "no driver moved"
        return Reading(
            f"The driver tree {p.tree} cannot split the change: {why}.",
            [Update(kind="drivers", status=Status.NOT_TESTABLE, evidence=f"not testable: {why}")],
        )
    moved = drivers_moved(p)
    text = f"Split over {p.tree}: {described(p, moved)}."
    status = Status.CONFIRMED if moved else Status.RULED_OUT
    return Reading(text, [Update(kind="drivers", status=status, evidence=text)])


def _decide(case: Case) -> list[RootCause]:
    split = case.evidence.drivers
    if split is None or not split.split or not to_explain(case) or case.of(data_quality.KIND.name):
        return []  # a data problem in the windows is in every driver's sums: their split would blame it
    moved = drivers_moved(split)
    return [
        RootCause(kind="driver_change", driver=p.name, contribution=share_of(p.share), change=p.part,
                  evidence=described(split, [p]))
        for p in moved
    ]  # fmt: skip


def _words(c: RootCause, evidence: Evidence) -> str:
    """ "sessions fell 7.6% (100% of the change) while conversion and aov held"."""
    split = evidence.drivers
    p = split.part(c.driver or "") if split is not None else None
    if split is None or p is None:
        return f"the driver {c.driver}"
    way = "fell" if p.current < p.baseline else "rose"
    held = [q.name for q in split.parts if abs(q.share or 0) < HELD]
    rest = f" while {' and '.join(held)} held" if held else ""
    return f"{p.name} {way} {pct(p.change_pct).lstrip('+-')} ({share(p.share or 0)} of the change){rest}"


def _split(d: CheckData) -> DriverSplit:
    return driver_split(d.table, d.spec)


def _check(d: CheckData, c: RootCause) -> Checked:
    split = prepared(d, "drivers", _split)
    p = split.part(c.driver or "")
    if not split.split or p is None:
        return Checked(
            f"{c.driver!r} is not a driver of {d.spec.metric} here ({split.reason or 'no such driver'})"
        )
    return Checked(size_problem(c.contribution, p.share, d.tolerance), p.share)


KIND = Kind(
    name="driver_tree",
    causes=("driver_change",),
    hypotheses=_hypotheses,
    tests={
        "drivers": Test(
            lambda e: e.drivers is not None,
            "split = driver_split(table, spec)\nemit(split)",
            "Split the change over the metric's drivers: which of them moved?",
        )
    },
    read=_read,
    decide=_decide,
    owns=lambda c, spec: c.kind == "driver_change",
    confirms={"driver_change": "drivers"},
    words=_words,
    says_share=True,
    check=_check,
    ahead={"drivers": _split},
)
