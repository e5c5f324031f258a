"""From structured evidence to root causes, a confidence and a sentence a person can repeat.

The offline planner concludes with this, and the loop uses it for a partial conclusion when a run
stops early, so both say the same thing for the same evidence.
"""

from __future__ import annotations

from collections.abc import Callable

from investigator.analysis.causes import CauseKind, RootCause
from investigator.analysis.spec import AnalysisSpec
from investigator.fmt import num, pct, seg
from investigator.run.decision import Confidence
from investigator.run.evidence import Evidence

MATERIAL = 0.25  # a data-quality issue must explain this share of the change to be a cause
DQ_DOMINATES = 0.7


def root_causes(evidence: Evidence, spec: AnalysisSpec) -> list[RootCause]:
    """Most important first: data problems, then seasonality, then business causes."""
    significant = evidence.significant
    causes: list[RootCause] = []
    dq = [i for i in (evidence.quality.issues if evidence.quality else []) if abs(i.share) >= MATERIAL]
    for i in dq:
        causes.append(
            RootCause(kind="data_quality", segment=i.segment, detail=i.detail,
                      contribution=round(i.share, 3), evidence=i.evidence)
        )  # fmt: skip
    dq_segments = [i.segment for i in dq if i.segment]
    dq_whole = sum(i.share for i in dq if not i.segment)
    season = evidence.seasonality
    if season is not None and season.seasonal and significant:
        causes.append(
            RootCause(
                kind="seasonality",
                contribution=round(min(1.0, (season.best_change_pct or 0) / (season.change_pct or 1)), 3),
                evidence=f"{season.best_lag_days} days earlier the same windows moved "
                f"{pct(season.best_change_pct)} (now {pct(season.change_pct)})",
            )
        )
    # a ratio within normal variation: its mix/rate split is a split of noise
    ratio = evidence.ratio if significant else None
    if ratio is not None and ratio.driver == "mix":
        split = next(d for d in ratio.dimensions if d.dimension == ratio.dimension)
        causes.append(
            RootCause(
                kind="mix_shift",
                segment={ratio.dimension: ratio.segment},
                contribution=round(ratio.driver_share, 3),
                evidence=f"{ratio.dimension}={ratio.segment} share of {spec.denominator} moved "
                f"{split.top_mix_weight_change:+.1%}; mix explains {num(split.mix)} of the "
                f"{num(ratio.change)} change",
            )
        )
    kind: CauseKind = "rate_change" if spec.is_ratio else "segment_change"
    segments = evidence.segments
    elements = [] if (ratio and ratio.driver == "mix") or segments is None else segments.elements
    for e in elements:
        if any(_overlaps(e.segment, s) for s in dq_segments) or abs(dq_whole) >= DQ_DOMINATES:
            continue  # the data problem already explains this segment's move
        segment = e.segment
        d = evidence.drilled(segment)
        if d is not None and not d.uniform and d.concentrated_in:
            segment = d.concentrated_in
        causes.append(
            RootCause(
                kind=kind,
                segment=segment,
                contribution=round(e.share, 3),
                evidence=f"{seg(segment)}: {num(e.baseline)} -> {num(e.current)}, "
                f"{e.share:.0%} of the change",
            )
        )
    if ratio is not None and ratio.driver == "rate" and not elements:
        causes.append(
            RootCause(kind="rate_change", segment={ratio.dimension: ratio.segment},
                      contribution=round(ratio.driver_share, 3),
                      evidence=f"the ratio moved inside {ratio.dimension}={ratio.segment}")
        )  # fmt: skip
    if segments is not None and segments.broad.broad and significant and abs(dq_whole) < DQ_DOMINATES:
        causes.append(
            RootCause(kind="broad_based", contribution=1.0,
                      evidence=f"every segment moved about {pct(segments.broad.change_pct)}")
        )  # fmt: skip
    if not causes and not significant:
        move = evidence.movement
        z = move.z if move is not None else None
        causes.append(
            RootCause(kind="no_change", contribution=None,
                      evidence=f"{pct(move.change_pct if move else None)} is within normal variation"
                      + (f" (z={z:+.1f})" if z is not None else ""))
        )  # fmt: skip
    return causes


def _overlaps(a: dict[str, str], b: dict[str, str]) -> bool:
    return all(a.get(k) == v for k, v in b.items()) or all(b.get(k) == v for k, v in a.items())


def confidence(causes: list[RootCause], evidence: Evidence) -> Confidence:
    if not causes:
        return "low"
    top = causes[0]
    if top.kind == "no_change":
        z = evidence.movement.z if evidence.movement is not None else None
        return "high" if z is not None and abs(z) < 2 else "medium"
    share = abs(top.contribution or 0) if top.kind not in ("broad_based", "seasonality") else 1.0
    total = sum(abs(c.contribution or 0) for c in causes if c.kind != "broad_based")
    if share >= 0.6 or total >= 0.8:
        return "high"
    return "medium" if share >= 0.3 else "low"


WORDS: dict[CauseKind, Callable[[RootCause], str]] = {
    "data_quality": lambda c: f"a data problem ({c.detail}, {seg(c.segment)})",
    "seasonality": lambda c: "seasonality (the same period a year earlier moved alike)",
    "mix_shift": lambda c: f"a mix shift away from {seg(c.segment)}",
    "rate_change": lambda c: f"the rate changing inside {seg(c.segment)}",
    "segment_change": lambda c: f"{seg(c.segment)}",
    "broad_based": lambda c: "a broad-based move across all segments",
    "no_change": lambda c: "nothing: the movement is within normal variation",
}


def conclusion_text(causes: list[RootCause], evidence: Evidence, spec: AnalysisSpec) -> str:
    move = evidence.movement
    head = (
        f"{spec.metric} went from {num(move.baseline if move else None)} to "
        f"{num(move.current if move else None)} ({pct(move.change_pct if move else None)}) in "
        f"{spec.current.start}..{spec.current.end} vs {spec.baseline.start}..{spec.baseline.end}."
    )
    if not causes:
        return head + " No root cause could be established from the evidence gathered."
    if causes[0].kind == "no_change":
        z = move.z if move is not None else None
        against = f" (z={z:+.1f} against earlier windows)" if z is not None else ""
        return f"{head} That is within normal variation{against}: there is no root cause to find."
    parts = [
        WORDS[c.kind](c)
        + (f" ({abs(c.contribution):.0%} of the change)" if c.contribution not in (None, 1.0) else "")
        for c in causes[:3]
    ]
    return head + " Explained by " + "; ".join(parts) + "."
