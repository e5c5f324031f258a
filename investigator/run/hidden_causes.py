"""Causes the total alone does not show, and causes on a history too short to judge.

A total within normal variation can hide a segment that outran its own history or offsets another
cause; localization can be silent on a real move one segment carries; and with too little history
to tell noise apart, the segments that moved most are named with that caveat.
"""

from __future__ import annotations

from investigator.analysis.causes import CauseKind, RootCause, finite
from investigator.analysis.segments import Departure, Segment, SegmentExplanation
from investigator.fmt import num, pct, seg, share
from investigator.run.evidence import Evidence
from investigator.run.segment_causes import (
    MIN_OF_LEADER,
    MIN_SHARE,
    _beyond_fair_share,
    _moved,
    _overlaps,
    _share,
)
from investigator.run.verdict_words import _too_short

DISPROPORTIONATE_SHARE = 0.5  # with no localized segment: most of the change in one segment ...


DISPROPORTIONATE_GAP = 0.1  # ... and well beyond its weight in the baseline


OFFSET_Z = 4.0  # an offsetting segment, far outside its own history: many are scored


OUTRAN_Z = 2.5  # a departure from the rest's rate, against the segment's own history of them


CARRIES = (0.8, 1.5)  # ... by a segment that carries the net change (not one of several offsetting)


def _outran(e: Segment, segments: SegmentExplanation | None) -> bool:
    """Within normal variation for the total, yet one segment departed from the rest's rate far
    beyond its own history of such departures and carries the net change: the total's noisy
    history hid it (measles in one state)."""
    found = segments.departures if segments else []
    return any(d.segment == e.segment and _unusual(d) for d in found) and _beyond_fair_share(e, segments)


def _hidden(elements: list[Segment], segments: SegmentExplanation | None) -> list[Segment]:
    """Localized segments that are causes although the total stayed within normal variation: one
    that outran its own history or is new and carries the net change, a combination of values
    (localization singled it out against the noise of its leaves), or moves that cancel out across
    different dimensions (a country up, a channel down: two events). Values of one
    dimension that offset each other are a substitution inside it (one class relabelled as
    another, a phone swapped for another): the total did not move, and that is the answer."""
    kept = [
        e
        for e in elements
        if _outran(e, segments) or (e.baseline == 0 and CARRIES[0] <= e.share) or len(e.segment) > 1
    ]  # a combination of values localization singled out against its leaves' noise is no substitution
    ups = {d for e in elements if e.change > 0 for d in e.segment}
    downs = {d for e in elements if e.change < 0 for d in e.segment}
    if ups and downs and ups != downs and not (ups & downs):
        return elements  # offsetting across dimensions
    return kept


def _unusual(d: Departure) -> bool:
    """It carries the net change, departing from the rest's rate far beyond its own history."""
    return d.z is not None and abs(d.z) >= OUTRAN_Z and CARRIES[0] <= d.share <= CARRIES[1]


def _outrunners(segments: SegmentExplanation | None, kind: CauseKind) -> list[RootCause]:
    """`_outran` for segments localization did not return (it judged the total's noise)."""
    out = []
    for d in segments.departures if segments else []:
        if not _unusual(d):
            continue
        lead = next((s for s in segments.leaders if s.segment == d.segment), None) if segments else None
        if lead is None:
            continue
        out.append(
            _moved(lead, kind, f", {share(d.share)} of the change: {pct(d.pct)} while the rest moved "
                   f"{pct(d.rest_pct)}, a departure of z={d.z:+.1f} against its own history")
        )  # fmt: skip
    return out[:1]


def _leaders(
    leaders: list[Segment], kind: CauseKind, evidence: Evidence, segments: SegmentExplanation | None = None
) -> list[RootCause]:
    """The segments that moved most, named with the caveat that nothing measured their noise: the
    largest mover, and the largest one that moved against the total, if any."""
    departing = [f.segment for d in segments.broad.dimensions for f in d.departing] if segments else []
    movers = [s for s in leaders if abs(s.share) >= MIN_SHARE and s.segment in departing]
    if not movers:
        return []  # every leader moved at the rest's rate: its size, not a cause
    against = [s for s in movers if s.share < 0]
    picked = movers[:1] + [s for s in against[:1] if s is not movers[0]]
    m = evidence.movement
    caveat = (
        "ranked by contribution; "
        + (_too_short(m) if m is not None else "too little history")
        + " to tell it from normal variation"
    )
    return [_moved(s, kind, f", {share(s.share)} of the change ({caveat})") for s in picked]


def _disproportionate(movers: list[Segment], evidence: Evidence, kind: CauseKind) -> list[RootCause]:
    """A real move that localization found no clean segment for (a profit where many cells lose
    money fits no per-leaf model well): the one segment that carries most of the change and far
    more than its size, if there is one — else nothing."""
    base = evidence.movement.baseline if evidence.movement is not None else 0.0
    if not base or not movers:
        return []
    top = movers[0]
    weight = top.baseline / base
    if top.share < DISPROPORTIONATE_SHARE or top.share - weight < DISPROPORTIONATE_GAP:
        return []
    note = f"{weight:.0%} of the baseline, {share(top.share)} of the change; no narrower segment stood out"
    return [_moved(top, kind, f" ({note})")]


def _offsetting(
    segments: SegmentExplanation,
    causes: list[RootCause],
    taken: list[dict[str, str]],
    kind: CauseKind,
    leader: float,
) -> list[RootCause]:
    """With the total within normal variation, a segment that moved far outside its own history
    the other way from a listed cause offset it: localization, which explains the small net
    change, cannot see it. Nothing else is listed this way (a false cause costs)."""
    moved = [c.change for c in causes if c.kind == kind and c.change]
    seen = {d for c in causes for d in c.segment}  # localization already split these dimensions
    out = []
    for m in segments.movers:
        against = any(m.change * c < 0 for c in moved)
        small = abs(m.change) < MIN_OF_LEADER * leader
        if (
            abs(m.z) < OFFSET_Z
            or not against
            or small
            or seen & set(m.segment)
            or any(_overlaps(m.segment, s) for s in taken)
        ):
            continue
        taken, seen = [*taken, m.segment], seen | set(m.segment)
        share = _share(m.change / segments.total_change) if segments.total_change else None
        out.append(
            RootCause(kind=kind, segment=m.segment, contribution=share, change=finite(m.change),
                      evidence=f"{seg(m.segment)}: {num(m.baseline)} -> {num(m.current)} "
                      f"({pct(m.change_pct)}, z={m.z:+.1f} against its own history), offsetting the other "
                      "causes in the total")
        )  # fmt: skip
    return out
