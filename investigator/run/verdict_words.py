"""How a verdict is said: the conclusion a person can repeat (each cause in its kind's words),
windows as their dates, and drops an approved fact shows as late data."""

from __future__ import annotations

from collections.abc import Sequence

from investigator import kinds
from investigator.analysis.causes import RootCause
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.fmt import pair, pct, seg, share
from investigator.kinds.common import part_of, too_short
from investigator.kinds.data_quality import relabel_note
from investigator.kinds.offsetting import offset_note
from investigator.memory.models import ApprovedFact
from investigator.run.evidence import Evidence
from investigator.run.late_facts import fact_of


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
            few = too_short(move)
            return (
                f"{head} There are {few} to tell it from normal variation, and no segment, mix or "
                "rate explains it."
            )
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
        head += f" The history has {too_short(move)} to say how unusual this is."
        head += kinds.notes(evidence)
    elif move is not None and move.record and move.z is not None and abs(move.z) < 2:
        way = "fall" if (move.change or 0) < 0 else "rise"
        head += (
            f" It is the largest {way} in {move.comparable_windows:.0f} comparable windows (z={move.z:+.1f})."
        )
    elif move is not None and (notes := kinds.notes(evidence)):
        scored = f" (z={move.z:+.1f} against recent windows)" if move.z is not None else ""
        head += notes.rstrip(".") + scored + "."
    elif move is not None and move.z is not None and not move.significant and causes[0].segment:
        inside = "one segment inside it is not" if len(causes) == 1 else "segments inside it moved"
        head += f" The total is within normal variation (z={move.z:+.1f}), but {inside}."
    parts, late = [], []
    for c in causes[:3]:
        f = fact_of(c, facts)
        if f is not None:
            late.append(f)
            lag = f"{f.lag_days} days " if f.lag_days else ""
            where = seg(c.segment) if c.segment else spec.metric
            parts.append(f"incomplete recent data in {where}, which lands {lag}late per approved fact "
                         f"{f.id}" + _share_words(c, evidence))  # fmt: skip
        else:
            sized = kinds.owner(c, spec)
            share_words = "" if sized is not None and sized.says_share else _share_words(c, evidence)
            parts.append(kinds.words(c, evidence, spec) + share_words)
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


def _share_words(c: RootCause, evidence: Evidence) -> str:
    """How much of the net change a cause carries; a negative share moved against the total."""
    if c.contribution is None or c.contribution == 1.0:
        return ""
    if c.basis == "gross":  # a flat total: what it moved, what the rest moved the other way
        net = evidence.segments.total_change if evidence.segments else None
        either = f"{share(abs(c.contribution))} of the movement either way"
        if net and c.change is not None:
            return f" ({part_of(c.change / net, c.change, net)}: {either})"
        return f" ({either})"
    if c.contribution < 0:
        return f" (moved against the total: {share(abs(c.contribution))} of the change, the other way)"
    return f" ({share(c.contribution)} of the change)"
