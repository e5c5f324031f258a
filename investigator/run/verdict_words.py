"""How a verdict is said: the conclusion a person can repeat, the words for each kind of cause,
windows as their dates, and drops an approved fact shows as late data."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from investigator.analysis.causes import CauseKind, RootCause
from investigator.analysis.movement import Movement
from investigator.analysis.ratio import DimensionSplit, MixPart
from investigator.analysis.seasonality import Seasonality
from investigator.analysis.segments import SegmentExplanation
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.fmt import num, pair, pct, seg, share, value
from investigator.memory.models import ApprovedFact
from investigator.run.evidence import Evidence
from investigator.run.late_facts import fact_of


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


def _parts(split: DimensionSplit) -> list[MixPart]:
    """A dimension's mix parts; a split made before they were kept has its top value's only."""
    if split.parts:
        return split.parts
    return [MixPart(segment=split.top_mix_segment, mix=split.mix, weight_change=split.top_mix_weight_change)]


def _too_short(move: Movement) -> str:
    n = round(move.comparable_windows)
    if n < 1:
        return "no comparable earlier window, too few"
    return f"only {n} comparable earlier window{'s' if n != 1 else ''}, too few"


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


WORDS: dict[CauseKind, Callable[[RootCause], str]] = {
    "data_quality": lambda c: f"a data problem ({c.detail}, {seg(c.segment)})",
    "seasonality": lambda c: f"seasonality ({c.evidence})" if c.evidence else "seasonality",
    "mix_shift": lambda c: f"a mix shift away from {seg(c.segment)}",
    "rate_change": lambda c: f"the rate changing inside {seg(c.segment)}",
    "segment_change": lambda c: f"{seg(c.segment)}" if c.segment else "a move of the whole series",
    "broad_based": lambda c: "a broad-based move across all segments",
    "no_change": lambda c: "nothing: the movement is within normal variation",
}


def conclusion_text(
    causes: list[RootCause], evidence: Evidence, spec: AnalysisSpec, facts: Sequence[ApprovedFact] = ()
) -> str:
    move = evidence.movement
    was, now = pair(move.baseline if move else None, move.current if move else None)
    head = (
        f"{spec.metric} went from {was} to {now} ({pct(move.change_pct if move else None)}) in "
        f"{span(spec, spec.current)} vs {baseline_span(spec)}."
    )
    if not causes:
        return head + " No root cause could be established from the evidence gathered."
    if causes[0].kind == "no_change":
        if move is not None and move.short_history:
            few = _too_short(move)
            return f"{head} That is a small move, and there are {few} to tell it from normal variation."
        z = move.z if move is not None else None
        against = f" (z={z:+.1f} against recent earlier windows)" if z is not None else ""
        offset = "" if relabel_note(evidence) else offset_note(evidence)
        if offset:
            return f"{head} That is within normal variation{against}, but {offset}"
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
        f = fact_of(c, facts)
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


def baseline_span(spec: AnalysisSpec) -> str:
    """The baseline as the movement names it: its dates, and how it is compared when its length is
    not the window's (the mean of N windows; per period)."""
    g, n, dates = spec.window_grain, spec.baseline_windows, span(spec, spec.baseline)
    if not spec.baseline_words:
        return dates
    if n is not None:
        return f"the mean of the {n} windows of {g.count(spec.window_periods)} before ({dates})"
    return (
        f"{dates} per {g.name} ({g.count(spec.baseline_periods)} scaled to the window's "
        f"{spec.window_periods})"
    )


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


OFFSET_NOTE_Z = 4.0  # a segment this far outside its own history is worth a sentence, net or no net
OFFSET_NOTE_TIMES = 2.0  # ... when it moved at least twice the total's net change: others offset it


def offset_note(evidence: Evidence) -> str:
    """A total that held while one segment moved far outside its own history, offset by the rest
    (the end of a sentence; empty when there is none):
    the verdict stays "within normal variation" (the total did not move), but a person reading it
    should not have to find the segment in the table to learn that one region fell 20%."""
    segments = evidence.segments
    if segments is None or not segments.movers:
        return ""
    m = max(segments.movers, key=lambda s: abs(s.z))
    if abs(m.z) < OFFSET_NOTE_Z or abs(m.change) < OFFSET_NOTE_TIMES * abs(segments.total_change):
        return ""
    rest = segments.total_change - m.change
    way = "fell" if m.change < 0 else "rose"
    return (
        f"inside it {seg(m.segment)} {way} {num(abs(m.change))} ({pct(m.change_pct)}), far outside its own "
        f"history (z={m.z:+.1f}), while the rest moved {'+' if rest > 0 else ''}{num(rest)} and offset it."
    )


def _share_words(c: RootCause) -> str:
    """How much of the net change a cause carries; a negative share moved against the total."""
    if c.contribution is None or c.contribution == 1.0:
        return ""
    if c.contribution < 0:
        return f" (moved against the total: {share(abs(c.contribution))} of the change, the other way)"
    return f" ({share(c.contribution)} of the change)"
