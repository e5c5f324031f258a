"""Segments localization did not single out, named only where a person would want them: with too
little history to tell noise apart, the segments that moved most (with that caveat); on a real move
localization was silent on, the one segment that carries most of it, far beyond its size."""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.segments import Segment, SegmentExplanation
from investigator.fmt import share
from investigator.kinds import data_quality, outrunner, seasonality, segment
from investigator.kinds.base import Case, Kind
from investigator.kinds.common import (
    MIN_SHARE,
    moved,
    noise,
    overlaps,
    part_of,
    segment_kind,
    taken_by_data,
    to_explain,
    too_short,
)

DISPROPORTIONATE_SHARE = 0.5  # with no localized segment: most of the change in one segment ...
DISPROPORTIONATE_GAP = 0.1  # ... and well beyond its weight in the baseline


def _decide(case: Case) -> list[RootCause]:
    evidence, segments, move = case.evidence, case.evidence.segments, case.evidence.movement
    named = case.of(segment.KIND.name) + case.of(outrunner.KIND.name)
    if named or segments is None or segments.broad.broad:
        return []
    data = taken_by_data(case.of(data_quality.KIND.name), data_quality.relabelled(evidence))
    movers = [] if data_quality.explains_all(case) else segments.leaders
    movers = [
        s for s in movers if not any(overlaps(s.segment, d) for d in data) and not noise(case.evidence, s)
    ]
    if move is not None and move.short_history and not seasonality.seasonal(case):
        return _leaders(movers, case, segments)  # too little history to tell noise apart
    if not segment.considered(case) and to_explain(case):
        return _disproportionate(movers, case)  # localization was silent on a real move
    return []


def _leaders(leaders: list[Segment], case: Case, segments: SegmentExplanation) -> list[RootCause]:
    """The segments that moved most, named with the caveat that nothing measured their noise: the
    largest mover, and the largest one that moved against the total, if any."""
    departing = [f.segment for d in segments.broad.dimensions for f in d.departing]
    movers = [s for s in leaders if abs(s.share) >= MIN_SHARE and s.segment in departing]
    if not movers:
        return []  # every leader moved at the rest's rate: its size, not a cause
    against = [s for s in movers if s.share < 0]
    picked = movers[:1] + [s for s in against[:1] if s is not movers[0]]
    m = case.evidence.movement
    caveat = (
        "ranked by contribution; "
        + (too_short(m) if m is not None else "too little history")
        + " to tell it from normal variation"
    )
    kind = segment_kind(case.spec.is_ratio)
    return [moved(s, kind, f", {part_of(s.share, s.change)} ({caveat})") for s in picked]


def _disproportionate(movers: list[Segment], case: Case) -> list[RootCause]:
    """A real move that localization found no clean segment for (a profit where many cells lose
    money fits no per-leaf model well): the one segment that carries most of the change and far
    more than its size, if there is one — else nothing."""
    base = case.evidence.movement.baseline if case.evidence.movement is not None else 0.0
    if not base or not movers:
        return []
    top = movers[0]
    weight = top.baseline / base
    if top.share < DISPROPORTIONATE_SHARE or top.share - weight < DISPROPORTIONATE_GAP:
        return []
    note = f"{weight:.0%} of the baseline, {share(top.share)} of the change; no narrower segment stood out"
    return [moved(top, segment_kind(case.spec.is_ratio), f" ({note})")]


KIND = Kind(
    name="unlocalized", causes=("segment_change", "rate_change"), decide=_decide, needs_dimensions=True
)
