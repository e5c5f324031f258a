"""A segment's move as a cause: the bar it must clear (a tenth of the net change, a tenth of the
leader's move, beyond its fair share) and the cause it becomes, its share rounded and finite."""

from __future__ import annotations

from investigator.analysis.causes import CauseKind, RootCause, finite
from investigator.analysis.segments import Segment, SegmentExplanation
from investigator.fmt import pair, seg

MIN_SHARE = 0.1  # a segment must explain a tenth of the net change to be listed as a cause


MIN_OF_LEADER = 0.1  # ... and move at least a tenth as much as the leading segment


def _beyond_fair_share(e: Segment, segments: SegmentExplanation | None) -> bool:
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


def _moved(s: Segment, kind: CauseKind, tail: str, segment: dict[str, str] | None = None) -> RootCause:
    """A segment's move as a cause: its numbers, then `tail`; `segment` when a drill narrowed it."""
    return RootCause(
        kind=kind,
        segment=segment or s.segment,
        contribution=_share(s.share),
        change=finite(s.change),
        evidence=f"{seg(s.segment)}: {' -> '.join(pair(s.baseline, s.current))}{tail}",
    )


def _share(x: float | None) -> float | None:
    """A share from the evidence, rounded; a NaN or an infinity (bad data, or a forged result from
    the kernel) is none, so the cause carries no share and the check refuses it."""
    f = finite(x)
    return round(f, 3) if f is not None else None


def _overlaps(a: dict[str, str], b: dict[str, str]) -> bool:
    return all(a.get(k) == v for k, v in b.items()) or all(b.get(k) == v for k, v in a.items())
