"""A segment that outran its own history while the total held: within normal variation for the
total, one segment departed from the rest's rate far beyond its own history of such departures
and carries the net change (measles in one state while the national count looked ordinary).

Only when nothing else was found: it is the last word on a quiet total, not a second cause.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.segments import Departure, Segment, SegmentExplanation
from investigator.fmt import pct, share
from investigator.kinds.base import Case, Kind
from investigator.kinds.common import beyond_fair_share, moved, noise, segment_kind

OUTRAN_Z = 2.5  # a departure from the rest's rate, against the segment's own history of them
CARRIES = (0.8, 1.5)  # ... by a segment that carries the net change (not one of several offsetting)


def unusual(d: Departure) -> bool:
    """It carries the net change, departing from the rest's rate far beyond its own history."""
    return d.z is not None and abs(d.z) >= OUTRAN_Z and CARRIES[0] <= d.share <= CARRIES[1]


def outran(e: Segment, segments: SegmentExplanation | None) -> bool:
    """A localized segment that departed unusually and beyond its fair share."""
    found = segments.departures if segments else []
    return any(d.segment == e.segment and unusual(d) for d in found) and beyond_fair_share(e, segments)


def _decide(case: Case) -> list[RootCause]:
    """For segments localization did not return (it judged the total's noise): the first that
    outran its history, on a total within normal variation with a history long enough to say so."""
    move, segments = case.evidence.movement, case.evidence.segments
    short = move is not None and move.short_history
    if case.evidence.significant or short or case.accepted or segments is None:
        return []
    for d in segments.departures:
        lead = next((s for s in segments.leaders if s.segment == d.segment), None)
        if not unusual(d) or lead is None or noise(case.evidence, lead):
            continue
        tail = (
            f", {share(d.share)} of the change: {pct(d.pct)} while the rest moved {pct(d.rest_pct)}, "
            f"a departure of z={d.z:+.1f} against its own history"
        )
        return [moved(lead, segment_kind(case.spec.is_ratio), tail)]
    return []


KIND = Kind(name="outrunner", causes=("segment_change", "rate_change"), decide=_decide, needs_dimensions=True)
