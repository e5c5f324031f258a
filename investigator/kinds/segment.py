"""A segment that departs from its fair share: localization over every combination of dimension
values found where the change sits, and a segment is named when it carries a material part of the
net change and moved unlike the rest (not merely in proportion to its size). A drill narrows it to
the child that holds the change. For a ratio, the segment's cause is its rate changing inside it.

On a total within normal variation only what the total hid is named (`hidden`).
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.segments import DrillDown, Segment, SegmentExplanation
from investigator.analysis.shares import segment_share
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.verify import size_problem
from investigator.fmt import num, pct, seg
from investigator.kinds import data_quality, outrunner
from investigator.kinds.base import Case, CheckData, Checked, Kind, Reading, Test
from investigator.kinds.common import (
    LOCALIZE,
    MIN_OF_LEADER,
    MIN_SHARE,
    SEGMENT_CAUSES,
    beyond_fair_share,
    moved,
    noise,
    overlaps,
    part_of,
    segment_kind,
    taken_by_data,
    to_explain,
)
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.hypotheses import HypothesisKind, Status, Update


def considered(case: Case) -> list[Segment]:
    """The localized segments the verdict weighs: none when the mix drove a ratio (the segments
    split a mix, not a rate); on a total within normal variation, only those the total hid."""
    evidence = case.evidence
    segments = evidence.segments
    ratio = evidence.ratio if to_explain(case) else None
    if segments is None or (ratio is not None and ratio.driver == "mix"):
        return []
    if to_explain(case):
        return segments.elements  # a short history cannot say the move is ordinary, nor a record
    return hidden(segments.elements, segments)


def hidden(elements: list[Segment], segments: SegmentExplanation | None) -> list[Segment]:
    """Localized segments that are causes although the total stayed within normal variation: one
    that outran its own history or is new and carries the net change, a combination of values
    (localization singled it out against the noise of its leaves), or moves that cancel out across
    different dimensions (a country up, a channel down: two events). Values of one
    dimension that offset each other are a substitution inside it (one class relabelled as
    another, a phone swapped for another): the total did not move, and that is the answer."""
    kept = [e for e in elements if outrunner.outran(e, segments) or _new_and_carries(e) or len(e.segment) > 1]
    ups = {d for e in elements if e.change > 0 for d in e.segment}
    downs = {d for e in elements if e.change < 0 for d in e.segment}
    if ups and downs and ups != downs and not (ups & downs):
        return elements  # offsetting across dimensions
    return kept


def _new_and_carries(e: Segment) -> bool:
    """A segment with no baseline that carries the net change."""
    return e.baseline == 0 and outrunner.CARRIES[0] <= e.share


def leader(case: Case) -> float:
    """The largest move among the segments weighed: the yardstick a smaller one is measured by."""
    return max((abs(e.change) for e in considered(case)), default=0.0)


def _decide(case: Case) -> list[RootCause]:
    evidence = case.evidence
    if data_quality.explains_all(case):
        return []  # the data problem explains the move
    kind, segments = segment_kind(case.spec.is_ratio), evidence.segments
    taken = taken_by_data(case.of(data_quality.KIND.name), data_quality.relabelled(evidence))
    top = leader(case)
    listed: list[dict[str, str]] = []
    causes = []
    for e in considered(case):
        if any(overlaps(e.segment, s) for s in taken):
            continue  # the data problem already explains this segment's move
        if abs(e.share) < MIN_SHARE or abs(e.change) < MIN_OF_LEADER * top:
            continue  # too small to act on: a person would chase noise
        if noise(case.evidence, e):
            continue  # a count that moved within its own noise: 0 -> 2 events is no cause
        if not beyond_fair_share(e, segments):
            continue  # it moved at the rest's rate: its size made its share, not a cause
        segment, held = e.segment, ""
        d = evidence.drilled(segment)
        if d is not None and not d.uniform and d.concentrated_in:
            segment, held = d.concentrated_in, f"; held by {seg(d.concentrated_in)}"
        if any(overlaps(segment, s) for s in listed):
            continue  # a part or a whole of a cause already listed explains it
        listed.append(segment)
        causes.append(
            moved(
                e,
                kind,
                f", {part_of(e.share, e.change, segments.total_change if segments else None)}{held}",
                segment,
            )
        )
    return causes


def _hypotheses(spec: AnalysisSpec) -> list[tuple[HypothesisKind, str]]:
    if spec.is_ratio or not spec.dimensions:
        return []  # a ratio's segments are its rate (`mix_rate`)
    dims = ", ".join(spec.dimensions)
    return [("segments", f"The change is concentrated in a few segments of {dims} (any combination).")]


def _read(p: AnalysisResult) -> Reading | None:
    if isinstance(p, DrillDown):
        moved_by = f"{pct(p.segment_change_pct)}, {p.share_of_total:.0%} of the total change"
        head = f"Inside {seg(p.segment)} ({moved_by})"
        if p.uniform:
            return Reading(head + " every child segment moved alike: the cause is the segment itself.", [])
        return Reading(head + f" the change is held by {seg(p.concentrated_in)}: the cause is narrower.", [])
    if not isinstance(p, SegmentExplanation):
        return None
    if p.broad.broad:
        return Reading(
            None, [Update(kind="segments", status=Status.RULED_OUT, evidence="no segment stands out")]
        )
    if not p.elements:
        return Reading(
            "Localization found no segment that stands out from noise, and segments did not move alike.",
            [Update(kind="segments", status=Status.RULED_OUT, evidence="no segment stands out")],
        )
    desc = "; ".join(
        f"{seg(e.segment)} {num(e.baseline)} -> {num(e.current)} ({e.share:.0%} of the change)"
        for e in p.elements
    )
    text = f"Localization over all dimension combinations points to: {desc}."
    return Reading(text, [Update(kind="segments", status=Status.CONFIRMED, evidence=text)])


def _words(c: RootCause, evidence: Evidence) -> str:
    return f"the rate changing inside {seg(c.segment)}" if c.kind == "rate_change" else seg(c.segment)


def _check(d: CheckData, c: RootCause) -> Checked:
    if not c.segment:
        return Checked(f"{c.kind} needs a segment")
    measured = segment_share(d.cube, d.spec, c.segment)
    return Checked(size_problem(c.contribution, measured, d.tolerance), measured)


KIND = Kind(
    name="segment",
    causes=("segment_change", "rate_change"),
    hypotheses=_hypotheses,
    tests={
        "segments": Test(
            lambda e: e.segments is not None,
            LOCALIZE,
            "Localize the change: find the smallest set of segments, at any depth, that explains it.",
        )
    },
    read=_read,
    decide=_decide,
    owns=lambda c, spec: c.kind in SEGMENT_CAUSES,
    confirms={"segment_change": "segments", "rate_change": "rate"},
    words=_words,
    check=_check,
    needs_dimensions=True,
    late=("segment_change", "rate_change"),
)
