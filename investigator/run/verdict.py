"""From structured evidence to root causes, a confidence and a sentence a person can repeat.

The offline planner concludes with this, and the loop uses it for a partial conclusion when a run
stops early, so both say the same thing for the same evidence.

The rules for what a quiet or short-history total hides live in `hidden_causes`, the words in
`verdict_words`.
"""

from __future__ import annotations

from investigator.analysis.causes import CauseKind, RootCause, finite
from investigator.analysis.ratio import RatioDecomposition
from investigator.analysis.spec import AnalysisSpec
from investigator.fmt import num, pair, pct, seg, share
from investigator.run.decision import Confidence
from investigator.run.evidence import Evidence, material_issues
from investigator.run.hidden_causes import _disproportionate, _hidden, _leaders, _offsetting, _outrunners
from investigator.run.late_facts import late_fact as late_fact
from investigator.run.late_facts import with_facts as with_facts
from investigator.run.segment_causes import (
    MIN_OF_LEADER,
    MIN_SHARE,
    _beyond_fair_share,
    _moved,
    _overlaps,
    _share,
)
from investigator.run.verdict_words import _parts, _too_short, broad_words, season_words
from investigator.run.verdict_words import conclusion_text as conclusion_text
from investigator.run.verdict_words import relabel_note as relabel_note
from investigator.run.verdict_words import span as span

DQ_DOMINATES = 0.7


def root_causes(evidence: Evidence, spec: AnalysisSpec) -> list[RootCause]:
    """Most important first: data problems, then seasonality, then business causes.

    A move within normal variation gets no business cause, except a segment that moved far
    outside its own history and carries the net change (a noisy total can hide a real outbreak);
    a move the history is too short to judge still gets the best explanation the data supports."""
    move = evidence.movement
    significant = evidence.significant
    short = move is not None and move.short_history
    causes: list[RootCause] = []
    dq = material_issues(evidence.quality)
    for i in dq:
        causes.append(
            RootCause(kind="data_quality", segment=i.segment, detail=i.detail,
                      contribution=_share(i.share), change=finite(i.effect), evidence=i.evidence)
        )  # fmt: skip
    dq_segments = [i.segment for i in dq if i.segment]
    # a value renamed upstream moves between two labels: neither label is a business cause
    issues = evidence.quality.issues if evidence.quality else []
    dq_segments += [s for i in issues if i.detail == "relabelled" for s in (i.segment, i.renamed_to) if s]
    dq_whole = sum(i.share for i in dq if not i.segment)
    explained = abs(dq_whole) >= DQ_DOMINATES
    season = evidence.seasonality
    material = (
        significant or abs(move.change_pct or 0) >= SEASON_MATERIAL if move is not None else significant
    )
    if season is not None and season.seasonal and material and not explained:
        causes.append(
            RootCause(
                kind="seasonality",
                contribution=_share(min(1.0, (season.best_change_pct or 0) / (season.change_pct or 1))),
                evidence=season_words(season),
            )
        )
    seasonal = any(c.kind == "seasonality" for c in causes)  # the season moved everything alike
    if not spec.dimensions:  # a single series: the whole of it moved, or nothing did
        if significant and not explained and not seasonal and move is not None and move.change:
            causes.append(_whole(evidence, spec))
        return causes + _unmoved(causes, evidence)
    # a ratio within normal variation: its mix/rate split is a split of noise
    ratio = evidence.ratio if significant else None
    if ratio is not None and ratio.driver == "mix":
        causes += _mix_parts(ratio, spec)
    kind: CauseKind = "rate_change" if spec.is_ratio else "segment_change"
    segments = evidence.segments
    elements = [] if (ratio and ratio.driver == "mix") or segments is None else segments.elements
    if not significant:  # within normal variation (or too small to judge): only what the total hid
        # a short history cannot say the move is ordinary: what localization found still stands
        elements = _hidden(elements, segments) if not short else elements
    leader = max((abs(e.change) for e in elements), default=0.0)
    listed: list[dict[str, str]] = []
    for e in elements:
        if any(_overlaps(e.segment, s) for s in dq_segments) or explained:
            continue  # the data problem already explains this segment's move
        if abs(e.share) < MIN_SHARE or abs(e.change) < MIN_OF_LEADER * leader:
            continue  # too small to act on: a person would chase noise
        if not _beyond_fair_share(e, segments):
            continue  # it moved at the rest's rate: its size made its share, not a cause
        segment, held = e.segment, ""
        d = evidence.drilled(segment)
        if d is not None and not d.uniform and d.concentrated_in:
            segment, held = d.concentrated_in, f"; held by {seg(d.concentrated_in)}"
        if any(_overlaps(segment, s) for s in listed):
            continue  # a part or a whole of a cause already listed explains it
        listed.append(segment)
        causes.append(_moved(e, kind, f", {share(e.share)} of the change{held}", segment))
    strong = move is not None and move.strong
    if not strong and listed and segments is not None:  # a total near its normal range hides offsets
        causes += _offsetting(segments, causes, listed + dq_segments, kind, leader)
    if not significant and not short and not listed and not causes:
        causes += _outrunners(segments, kind)
        listed += [c.segment for c in causes]
    movers = [] if segments is None or explained else segments.leaders
    movers = [s for s in movers if not any(_overlaps(s.segment, d) for d in dq_segments)]
    broad_move = segments is not None and segments.broad.broad
    if not listed and segments is not None and not broad_move and short and not seasonal:
        causes += _leaders(movers, kind, evidence, segments)  # too little history to tell noise apart
    elif not listed and not elements and segments is not None and not broad_move and significant:
        causes += _disproportionate(movers, evidence, kind)  # localization was silent on a real move
    if ratio is not None and ratio.driver == "rate" and not elements and not broad_move:
        causes.append(
            RootCause(kind="rate_change", segment={ratio.dimension: ratio.segment},
                      contribution=_share(ratio.driver_share),
                      evidence=f"the ratio moved inside {ratio.dimension}={ratio.segment}")
        )  # fmt: skip
    if segments is not None and broad_move and significant and not explained and not seasonal:
        causes.append(RootCause(kind="broad_based", contribution=1.0, evidence=broad_words(segments, spec)))
    return causes + _unmoved(causes, evidence)


SEASON_MATERIAL = 0.05  # a usual seasonal move this size is the answer even within normal variation


def _mix_parts(ratio: RatioDecomposition, spec: AnalysisSpec) -> list[RootCause]:
    """The values whose shifting share of the denominator made the mix effect, each with its own
    part (the parts of every value add up to the dimension's mix effect), largest first."""
    split = next(d for d in ratio.dimensions if d.dimension == ratio.dimension)
    out = []
    parts = _parts(split)
    for i, p in enumerate(parts[:3]):
        part = p.mix / ratio.change if ratio.change else 0.0
        if i and (
            abs(part) < MIN_SHARE or p.mix * ratio.change < 0 or p.weight_change * parts[0].weight_change <= 0
        ):
            continue  # too small, against the move, or the other side of the same shift (shares sum to 1)
        out.append(
            RootCause(
                kind="mix_shift",
                segment={ratio.dimension: p.segment},
                contribution=_share(part),
                change=finite(p.mix),
                evidence=f"{seg({ratio.dimension: p.segment})} share of {spec.denominator} moved "
                f"{p.weight_change:+.1%}; its part of the mix is {num(p.mix)} of the "
                f"{num(ratio.change)} change ({ratio.dimension}'s whole mix: {num(split.mix)})",
            )
        )
    return out


def _unmoved(causes: list[RootCause], evidence: Evidence) -> list[RootCause]:
    """Nothing found, and the move is within normal variation (or too small to judge on a short
    history, which is said as such)."""
    move = evidence.movement
    if causes or evidence.significant:
        return []
    if move is not None and move.short_history:
        text = f"{pct(move.change_pct)} is a small move; {_too_short(move)} to tell it from normal variation"
        return [RootCause(kind="no_change", contribution=None, evidence=text)]
    z = move.z if move is not None else None
    text = f"{pct(move.change_pct if move else None)} is within normal variation" + (
        f" (z={z:+.1f})" if z is not None else ""
    )
    return [RootCause(kind="no_change", contribution=None, evidence=text)]


def _whole(evidence: Evidence, spec: AnalysisSpec) -> RootCause:
    """A single series that moved: the whole metric is the segment; nothing splits it further."""
    m = evidence.movement
    assert m is not None
    how = f"z={m.z:+.1f} against its recent history" if m.z is not None else _too_short(m) + " to score it"
    return RootCause(
        kind="segment_change", segment={}, contribution=1.0, change=finite(m.change),
        evidence=f"{spec.metric}: {' -> '.join(pair(m.baseline, m.current))} ({pct(m.change_pct)}, {how}); "
        "the data has no dimension to split it by",
    )  # fmt: skip


FULLY = (0.8, 1.2)  # one cause that explains about all of the change


def confidence(causes: list[RootCause], evidence: Evidence) -> Confidence:
    """How sure the conclusion is: high only for a move far outside normal variation that the
    causes explain; a move merely unusual, or one the history is too short to judge, is at most
    medium, and medium on a short history only when the analysis explained it all."""
    if not causes:
        return "low"
    top = causes[0]
    move = evidence.movement
    z = move.z if move is not None else None
    if top.kind == "no_change":
        if move is not None and move.short_history:
            return "low"
        return "high" if z is not None and abs(z) < 2 else "medium"
    share = abs(top.contribution or 0) if top.kind not in ("broad_based", "seasonality") else 1.0
    total = sum(abs(c.contribution or 0) for c in causes if c.kind != "broad_based")
    level: Confidence = "high" if share >= 0.6 or total >= 0.8 else "medium" if share >= 0.3 else "low"
    if move is None or move.short_history or z is None:
        named = bool(top.segment) or top.kind in ("data_quality", "mix_shift")
        return "medium" if named and FULLY[0] <= share <= FULLY[1] else "low"
    if level == "high" and not move.strong:
        return "medium"  # unusual, but not far outside normal variation
    return level
