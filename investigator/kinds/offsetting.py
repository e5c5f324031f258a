"""Offsetting moves: with the total near its normal range, a segment that moved far outside its
own history the other way from a named cause offset it. Localization, which explains the small
net change, cannot see it; nothing else is named this way (a false cause costs).

The same shape with no named cause (a total that held while one region fell 20% and the rest rose)
is not a cause; `offset_note` says it in the headline.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause, finite
from investigator.fmt import num, pct, seg
from investigator.kinds import data_quality, segment
from investigator.kinds.base import Case, Kind
from investigator.kinds.common import MIN_OF_LEADER, noise, overlaps, segment_kind, share_of, taken_by_data
from investigator.run.evidence import Evidence

OFFSET_Z = 4.0  # an offsetting segment, far outside its own history: many are scored
OFFSET_NOTE_TIMES = 2.0  # a note when it moved at least twice the total's net change: others offset it


def _decide(case: Case) -> list[RootCause]:
    evidence, kind = case.evidence, segment_kind(case.spec.is_ratio)
    segments, move = evidence.segments, evidence.movement
    listed = [c.segment for c in case.of(segment.KIND.name)]
    if (move is not None and move.strong) or not listed or segments is None:
        return []
    data = taken_by_data(case.of(data_quality.KIND.name), data_quality.relabelled(evidence))
    taken = listed + data
    named = [c.change for c in case.causes if c.kind == kind and c.change]
    seen = {d for c in case.causes for d in c.segment}  # localization already split these dimensions
    top = segment.leader(evidence)
    out = []
    for m in segments.movers:
        against = any(m.change * c < 0 for c in named)
        small = abs(m.change) < MIN_OF_LEADER * top
        if abs(m.z) < OFFSET_Z or not against or small or seen & set(m.segment) or noise(case.evidence, m):
            continue
        if any(overlaps(m.segment, s) for s in taken):
            continue
        taken, seen = [*taken, m.segment], seen | set(m.segment)
        part = share_of(m.change / segments.total_change) if segments.total_change else None
        out.append(
            RootCause(kind=kind, segment=m.segment, contribution=part, change=finite(m.change),
                      evidence=f"{seg(m.segment)}: {num(m.baseline)} -> {num(m.current)} "
                      f"({pct(m.change_pct)}, z={m.z:+.1f} against its own history), offsetting the other "
                      "causes in the total")
        )  # fmt: skip
    return out


def offset_note(evidence: Evidence) -> str:
    """A total that held while one segment moved far outside its own history, offset by the rest
    (the end of a sentence; empty when there is none): the verdict stays "within normal variation"
    (the total did not move), but a person reading it should not have to find the segment in the
    table to learn that one region fell 20%."""
    segments = evidence.segments
    if segments is None or not segments.movers:
        return ""
    m = max(segments.movers, key=lambda s: abs(s.z))
    if abs(m.z) < OFFSET_Z or abs(m.change) < OFFSET_NOTE_TIMES * abs(segments.total_change):
        return ""
    rest = segments.total_change - m.change
    way = "fell" if m.change < 0 else "rose"
    return (
        f"inside it {seg(m.segment)} {way} {num(abs(m.change))} ({pct(m.change_pct)}), far outside its own "
        f"history (z={m.z:+.1f}), while the rest moved {'+' if rest > 0 else ''}{num(rest)} and offset it."
    )


KIND = Kind(
    name="offsetting", causes=("segment_change", "rate_change"), decide=_decide, needs_dimensions=True
)
