"""From structured evidence to root causes, a confidence and a sentence a person can repeat.

The offline planner concludes with this, and the loop uses it for a partial conclusion when a run
stops early, so both say the same thing for the same evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from investigator.analysis.causes import CauseKind, RootCause, finite
from investigator.analysis.movement import Movement
from investigator.analysis.ratio import DimensionSplit, MixPart, RatioDecomposition
from investigator.analysis.seasonality import Seasonality
from investigator.analysis.segments import Departure, Segment, SegmentExplanation
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.fmt import num, pair, pct, seg, share, value
from investigator.memory.models import ApprovedFact
from investigator.run.decision import Confidence
from investigator.run.evidence import Evidence, material_issues

DQ_DOMINATES = 0.7
MIN_SHARE = 0.1  # a segment must explain a tenth of the net change to be listed as a cause
MIN_OF_LEADER = 0.1  # ... and move at least a tenth as much as the leading segment
DISPROPORTIONATE_SHARE = 0.5  # with no localized segment: most of the change in one segment ...
DISPROPORTIONATE_GAP = 0.1  # ... and well beyond its weight in the baseline


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


def season_words(season: Seasonality) -> str:
    lag = season.best_lag or f"{season.best_lag_days} days"
    if season.years >= 2:
        changes = [c.change_pct for c in season.comparisons if c.change_pct is not None]
        return (
            f"the same windows moved alike in {season.alike} of {season.years} earlier years "
            f"({pct(min(changes))} to {pct(max(changes))}; now {pct(season.change_pct)})"
        )
    return (
        f"{lag} earlier the same windows moved {pct(season.best_change_pct)} (now {pct(season.change_pct)})"
    )


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


def _parts(split: DimensionSplit) -> list[MixPart]:
    """A dimension's mix parts; a split made before they were kept has its top value's only."""
    if split.parts:
        return split.parts
    return [MixPart(segment=split.top_mix_segment, mix=split.mix, weight_change=split.top_mix_weight_change)]


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


def _too_short(move: Movement) -> str:
    n = round(move.comparable_windows)
    if n < 1:
        return "no comparable earlier window, too few"
    return f"only {n} comparable earlier window{'s' if n != 1 else ''}, too few"


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


def broad_words(segments: SegmentExplanation, spec: AnalysisSpec) -> str:
    """A broad move said with its spread: "all 5 regions fell, by 3% to 5%"."""
    b = segments.broad
    if not b.dimensions:
        return f"every segment moved about {pct(b.change_pct)}"
    way = "rose" if (b.change_pct or 0) > 0 else "fell"
    parts = []
    for d in b.dimensions:
        who = f"all {d.values}" if d.with_total == d.values else f"{d.with_total} of {d.values}"
        spread = (
            f"by {pct(d.min_pct)} to {pct(d.max_pct)}"
            if d.values <= 5
            else f"the middle half by {pct(d.low_pct)} to {pct(d.high_pct)}"
        )
        parts.append(f"{who} {value(d.dimension)} values {way}, {spread}")
    return f"{spec.metric} moved {pct(b.change_pct)} and no segment departed from it: " + "; ".join(parts)


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


def _moved(s: Segment, kind: CauseKind, tail: str, segment: dict[str, str] | None = None) -> RootCause:
    """A segment's move as a cause: its numbers, then `tail`; `segment` when a drill narrowed it."""
    return RootCause(
        kind=kind,
        segment=segment or s.segment,
        contribution=_share(s.share),
        change=finite(s.change),
        evidence=f"{seg(s.segment)}: {' -> '.join(pair(s.baseline, s.current))}{tail}",
    )


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


def _share(x: float | None) -> float | None:
    """A share from the evidence, rounded; a NaN or an infinity (bad data, or a forged result from
    the kernel) is none, so the cause carries no share and the check refuses it."""
    f = finite(x)
    return round(f, 3) if f is not None else None


def _overlaps(a: dict[str, str], b: dict[str, str]) -> bool:
    return all(a.get(k) == v for k, v in b.items()) or all(b.get(k) == v for k, v in a.items())


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


WORDS: dict[CauseKind, Callable[[RootCause], str]] = {
    "data_quality": lambda c: f"a data problem ({c.detail}, {seg(c.segment)})",
    "seasonality": lambda c: f"seasonality ({c.evidence})" if c.evidence else "seasonality",
    "mix_shift": lambda c: f"a mix shift away from {seg(c.segment)}",
    "rate_change": lambda c: f"the rate changing inside {seg(c.segment)}",
    "segment_change": lambda c: f"{seg(c.segment)}" if c.segment else "a move of the whole series",
    "broad_based": lambda c: "a broad-based move across all segments",
    "no_change": lambda c: "nothing: the movement is within normal variation",
}


def late_fact(cause: RootCause, facts: Sequence[ApprovedFact]) -> ApprovedFact | None:
    """The approved `late_data` fact that explains a drop in this cause's segment, if any: rows
    of a late-landing segment are missing from the last days of the window, not lost."""
    rising = cause.change is not None and cause.change >= 0
    if cause.kind not in ("segment_change", "rate_change", "broad_based") or rising:
        return None
    return next(
        (f for f in facts
         if f.kind == "late_data" and all(cause.segment.get(k) == v for k, v in f.segment.items())),
        None,
    )  # fmt: skip


def with_facts(causes: list[RootCause], facts: Sequence[ApprovedFact]) -> list[RootCause]:
    """Causes an approved fact explains as incomplete recent data go first (data problems lead),
    their evidence naming the fact; the numbers stay as measured, so the check still holds."""
    known = [
        c.model_copy(update={"evidence": f"known late data (approved fact {f.id}: {f.text}); {c.evidence}"})
        for c in causes
        if (f := late_fact(c, facts)) is not None
    ]
    return known + [c for c in causes if late_fact(c, facts) is None]


def conclusion_text(
    causes: list[RootCause], evidence: Evidence, spec: AnalysisSpec, facts: Sequence[ApprovedFact] = ()
) -> str:
    move = evidence.movement
    was, now = pair(move.baseline if move else None, move.current if move else None)
    head = (
        f"{spec.metric} went from {was} to {now} ({pct(move.change_pct if move else None)}) in "
        f"{span(spec, spec.current)} vs {span(spec, spec.baseline)}."
    )
    if not causes:
        return head + " No root cause could be established from the evidence gathered."
    if causes[0].kind == "no_change":
        if move is not None and move.short_history:
            few = _too_short(move)
            return f"{head} That is a small move, and there are {few} to tell it from normal variation."
        z = move.z if move is not None else None
        against = f" (z={z:+.1f} against recent earlier windows)" if z is not None else ""
        return (
            f"{head} That is within normal variation{against}: there is no root cause to find."
            + relabel_note(evidence)
        )
    if move is not None and move.short_history:
        head += f" The history has {_too_short(move)} to say how unusual this is."
    elif move is not None and move.z is not None and not move.significant and causes[0].segment:
        inside = "one segment inside it is not" if len(causes) == 1 else "segments inside it moved"
        head += f" The total is within normal variation (z={move.z:+.1f}), but {inside}."
    elif move is not None and move.record and move.z is not None and abs(move.z) < 2:
        way = "fall" if (move.change or 0) < 0 else "rise"
        head += (
            f" It is the largest {way} in {move.comparable_windows:.0f} comparable windows (z={move.z:+.1f})."
        )
    words = dict(WORDS)
    gained = {
        (d.dimension, p.segment)
        for d in (evidence.ratio.dimensions if evidence.ratio else [])
        for p in _parts(d)
        if p.weight_change > 0
    }  # the segment gained share of the denominator
    words["mix_shift"] = lambda c: (
        f"a mix shift toward {seg(c.segment)}"
        if next(iter(c.segment.items()), None) in gained
        else f"a mix shift away from {seg(c.segment)}"
    )
    parts, late = [], []
    for c in causes[:3]:
        f = late_fact(c, facts)
        if f is not None:
            late.append(f)
            lag = f"{f.lag_days} days " if f.lag_days else ""
            where = seg(c.segment) if c.segment else spec.metric
            parts.append(f"incomplete recent data in {where}, which lands {lag}late per approved fact "
                         f"{f.id}" + _share_words(c))  # fmt: skip
        else:
            parts.append(words[c.kind](c) + _share_words(c))
    tail = ""
    if late:
        days = max((f.lag_days or 0) for f in late)
        tail = " Re-check once the late rows have landed" + (f" ({days} days)" if days else "") + "."
    return head + " Explained by " + "; ".join(parts) + "." + tail + relabel_note(evidence)


def span(spec: AnalysisSpec, w: Window) -> str:
    """A window as its dates: weekly data by the dates its weeks carry (weeks dated on Saturdays
    end on the Saturday asked, not six days after it), other data by its first and last day."""
    if spec.grain != "week":
        return f"{w.start}..{w.end}"
    weeks = spec.periods.periods(w.start, w.end)
    return f"the weeks dated {weeks[0]}..{weeks[-1]}" if len(weeks) > 1 else f"the week dated {weeks[0]}"


def relabel_note(evidence: Evidence) -> str:
    """A value renamed upstream, named with both its labels: its old label falls and its new one
    rises in the segment table, and a person must read the two as one."""
    issues = evidence.quality.issues if evidence.quality else []
    renamed = [i for i in issues if i.detail == "relabelled" and i.segment and i.renamed_to]
    return "".join(
        f" Relabelled, compared as one segment: {seg(i.segment)} became {seg(i.renamed_to)}."
        for i in renamed[:3]
    )


def _share_words(c: RootCause) -> str:
    """How much of the net change a cause carries; a negative share moved against the total."""
    if c.contribution is None or c.contribution == 1.0:
        return ""
    if c.contribution < 0:
        return f" (moved against the total: {share(abs(c.contribution))} of the change, the other way)"
    return f" ({share(c.contribution)} of the change)"
