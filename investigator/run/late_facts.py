"""Where an approved late-data fact can hold, and what it then says of a cause.

A `late_data` fact claims that a segment's rows land `lag_days` late: the data's last `lag_days`
are short there. It can explain a drop only (1) in a window that reaches those last days, (2) in
its own segment (a fact with no segment is about the whole metric, never one segment's drop), and
(3) up to what those days could have held: the segment's usual level over the late days inside
the window. A drop larger than that keeps its real cause, and the fact is named beside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from investigator import kinds
from investigator.analysis.causes import CauseKind, RootCause
from investigator.analysis.spec import AnalysisSpec
from investigator.fmt import num
from investigator.memory.models import ApprovedFact
from investigator.run.evidence import Evidence

FACT_MARK = "known late data (approved fact "


def late_days(fact: ApprovedFact, spec: AnalysisSpec) -> int:
    """How many of the current window's days are among the data's last `lag_days` (0 when the
    data's end is unknown, or the window ends before those days)."""
    if spec.data_last is None or not fact.lag_days or fact.lag_days < 1:
        return 0
    first_late = spec.data_last - timedelta(days=fact.lag_days - 1)
    start, end = max(spec.current.start, first_late), min(spec.current.end, spec.data_last)
    return max((end - start).days + 1, 0)


def _in_segment(fact: ApprovedFact, segment: dict[str, str]) -> bool:
    """The cause is the fact's segment or a part of it; a fact with no segment fits only causes
    of the whole metric."""
    if not fact.segment:
        return not segment
    return all(segment.get(k) == v for k, v in fact.segment.items())


def late_fact(cause: RootCause, facts: Sequence[ApprovedFact], spec: AnalysisSpec) -> ApprovedFact | None:
    """The approved `late_data` fact whose claim can hold for this drop: in its segment, in a
    window that reaches the data's last `lag_days`."""
    falling = cause.change is not None and cause.change < 0
    if cause.kind not in kinds.late_causes() or not falling:
        return None
    return next(
        (f for f in facts
         if f.kind == "late_data" and _in_segment(f, cause.segment) and late_days(f, spec) > 0),
        None,
    )  # fmt: skip


def _usual_level(cause: RootCause, evidence: Evidence) -> float | None:
    """The cause's segment's baseline total over the window (the whole metric's for no segment)."""
    if not cause.segment:
        return evidence.movement.baseline if evidence.movement is not None else None
    seen = evidence.segments.elements + evidence.segments.leaders if evidence.segments else []
    return next((s.baseline for s in seen if s.segment == cause.segment), None)


def capacity(cause: RootCause, fact: ApprovedFact, spec: AnalysisSpec, evidence: Evidence) -> float | None:
    """The most the fact's late days inside the window could have taken from the segment: its
    usual level over those days (None when the level is unknown or the metric is a ratio)."""
    level = _usual_level(cause, evidence)
    if level is None or spec.is_ratio or spec.current.days <= 0:
        return None
    return abs(level) * late_days(fact, spec) / spec.current.days


def with_facts(
    causes: list[RootCause], facts: Sequence[ApprovedFact], spec: AnalysisSpec, evidence: Evidence
) -> list[RootCause]:
    """A drop the late days could hold becomes incomplete recent data (a data problem: it leads),
    its evidence naming the fact; a larger drop keeps its cause, with the late part named beside
    it. The numbers stay as measured, so the host's check still holds."""
    known, rest = [], []
    for c in causes:
        f = late_fact(c, facts, spec)
        room = capacity(c, f, spec, evidence) if f is not None else None
        if f is None:
            rest.append(c)
        elif room is not None and abs(c.change or 0) <= room:
            why = f"the window's last {late_days(f, spec)} day(s) are among the data's last {f.lag_days}"
            known.append(c.model_copy(update={
                "kind": "data_quality", "detail": "incomplete_recent_data",
                "evidence": f"{FACT_MARK}{f.id}: {f.text}; {why}); {c.evidence}"}))  # fmt: skip
        else:
            most = f"up to {num(room)}" if room is not None else "a part"
            note = (
                f"; {most} of it may be rows landing late (approved fact {f.id}), the rest is a real change"
            )
            rest.append(c.model_copy(update={"evidence": c.evidence + note}))
    return known + rest


def fact_of(cause: RootCause, facts: Sequence[ApprovedFact]) -> ApprovedFact | None:
    """The approved fact a cause was relabelled by (`with_facts`), if any."""
    if cause.kind != "data_quality" or not cause.evidence.startswith(FACT_MARK):
        return None
    named = cause.evidence[len(FACT_MARK) :].split(":", 1)[0]
    return next((f for f in facts if f.id == named and f.kind == "late_data"), None)


def measurable(cause: RootCause, facts: Sequence[ApprovedFact], spec: AnalysisSpec) -> RootCause:
    """A cause relabelled by a fact, as the host checks its numbers: the drop it was measured as.
    Only a fact that can hold here relabels: any other cause is returned as it is."""
    f = fact_of(cause, facts)
    if f is None or not _in_segment(f, cause.segment) or late_days(f, spec) == 0:
        return cause
    kind: CauseKind = (
        ("broad_based" if spec.dimensions else "segment_change")
        if not cause.segment
        else ("rate_change" if spec.is_ratio else "segment_change")
    )
    return cause.model_copy(update={"kind": kind, "detail": None})
