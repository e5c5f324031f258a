"""The bar a segment must clear to be named, and the cause it becomes: shared by every kind whose
cause is a segment (a fair-share departure, an offset, an outrunner, a leader on a short history)."""

from __future__ import annotations

from investigator.analysis.causes import CauseKind, RootCause, finite
from investigator.analysis.counts import within_count_noise
from investigator.analysis.movement import Movement
from investigator.analysis.segments import Segment, SegmentExplanation, SegmentMove
from investigator.fmt import num, pair, seg, share
from investigator.kinds.base import Case
from investigator.run.evidence import Evidence

MIN_SHARE = 0.1  # a segment must explain a tenth of the net change to be listed as a cause
MIN_OF_LEADER = 0.1  # ... and move at least a tenth as much as the leading segment
LOCALIZE = "explanation = explain_segments(cube, spec, history=history)\nemit(explanation)"
SEGMENT_CAUSES: tuple[CauseKind, ...] = ("segment_change", "rate_change")


def beyond_fair_share(e: Segment, segments: SegmentExplanation | None) -> bool:
    """A one-dimension element is a cause only when it departed from its fair share (what it
    would have changed at the rest's rate); deeper elements were chosen by localization, which
    already weighs each against its siblings."""
    if segments is None or len(e.segment) != 1:
        return True
    dim = next(iter(e.segment))
    spread = next((d for d in segments.broad.dimensions if d.dimension == dim), None)
    if spread is None:
        return True
    return any(f.segment == e.segment for f in spread.departing)


def moved(s: Segment, kind: CauseKind, tail: str, segment: dict[str, str] | None = None) -> RootCause:
    """A segment's move as a cause: its numbers, then `tail`; `segment` when a drill narrowed it."""
    return RootCause(
        kind=kind,
        segment=segment or s.segment,
        contribution=share_of(s.share),
        change=finite(s.change),
        evidence=f"{seg(s.segment)}: {' -> '.join(pair(s.baseline, s.current))}{tail}",
    )


SHARE_LIMIT = 3.0  # past 300% of the net change a share says nothing: the total was flat beside the
# moves inside it, and "513% of the change" reads as an error


def part_of(part: float | None, change: float | None, net: float | None = None) -> str:
    """A cause's share of the net change in words: "55% of the change"; past `SHARE_LIMIT` (a
    total that held while the moves inside it offset each other) what it moved and what the rest
    moved the other way, in the metric's units: "+4.22k while the rest moved -3.40k (net +823.5)".
    `net`: the net change (else the one its share implies)."""
    if part is None or change is None or abs(part) <= SHARE_LIMIT:
        return f"{share(part or 0.0)} of the change"
    net = change / part if net is None else net
    return f"{_signed(change)} while the rest moved {_signed(net - change)} (net {_signed(net)})"


def gross_share(part: float) -> float:
    """A share of the net change (`part`) as a share of the gross movement: the cause's change
    against its own size plus the rest's (`|part| + |1 - part|` in net units). 5.13 of the net is
    55% of the gross (north +4.22k, the rest -3.40k); a share within 0..1 stays as it is."""
    return part / (abs(part) + abs(1 - part))


def sized(cause: RootCause) -> RootCause:
    """A cause past `SHARE_LIMIT` of the net change carries its share of the gross movement
    (`basis` "gross"): no share past 300% is ever reported."""
    part = cause.contribution
    if part is None or abs(part) <= SHARE_LIMIT or cause.basis == "gross":
        return cause
    return cause.model_copy(update={"contribution": round(gross_share(part), 3), "basis": "gross"})


def _signed(x: float) -> str:
    return ("+" if x > 0 else "") + num(x)


def noise(evidence: Evidence, s: Segment | SegmentMove) -> bool:
    """A segment of a count whose change is within its own noise (0 -> 2 events) is never a cause."""
    move = evidence.movement
    return move is not None and move.counts and within_count_noise(s.baseline, s.current)


def share_of(x: float | None) -> float | None:
    """A share from the evidence, rounded; a NaN or an infinity (bad data, or a forged result from
    the kernel) is none, so the cause carries no share and the check refuses it."""
    f = finite(x)
    return round(f, 3) if f is not None else None


def overlaps(a: dict[str, str], b: dict[str, str]) -> bool:
    """One segment is a part or the whole of the other."""
    return all(a.get(k) == v for k, v in b.items()) or all(b.get(k) == v for k, v in a.items())


def to_explain(case: Case) -> bool:
    """A move the breakdown must explain: outside normal variation, on a history too short to call
    it ordinary ("small" needs history: without it the breakdown is given, at low confidence), or
    one a kind calls news whatever its size (`Kind.notable`: a record, the end of a steady run)."""
    move = case.evidence.movement
    return case.evidence.significant or (move is not None and move.short_history) or case.notable


def too_short(move: Movement) -> str:
    """How little history there is, said as a reason ("only 2 comparable earlier windows, too few")."""
    n = round(move.comparable_windows)
    if n < 1:
        return "no comparable earlier window, too few"
    return f"only {n} comparable earlier window{'s' if n != 1 else ''}, too few"


def segment_kind(is_ratio: bool) -> CauseKind:
    """A segment's move in a ratio is its rate changing inside it."""
    return "rate_change" if is_ratio else "segment_change"


def taken_by_data(data_causes: list[RootCause], relabelled: list[dict[str, str]]) -> list[dict[str, str]]:
    """Segments a data problem already explains: its own, and both labels of a renamed value."""
    return [c.segment for c in data_causes if c.segment] + relabelled
