"""From structured evidence to root causes, a confidence and a sentence a person can repeat.

The offline planner concludes with this, and the loop uses it for a partial conclusion when a run
stops early, so both say the same thing for the same evidence.
"""

from __future__ import annotations

from typing import Any

from investigator.analysis.spec import AnalysisSpec
from investigator.run.compress import drill_key, num, pct, seg
from investigator.run.decision import Confidence, RootCause

MATERIAL = 0.25  # a data-quality issue must explain this share of the change to be a cause
DQ_DOMINATES = 0.7


def drilled(evidence: dict[str, Any], segment: dict[str, str]) -> dict[str, Any] | None:
    return evidence.get(drill_key(segment))


def root_causes(evidence: dict[str, Any], spec: AnalysisSpec) -> list[RootCause]:
    """Most important first: data problems, then seasonality, then business causes."""
    move = evidence.get("movement") or {}
    significant = bool(move.get("significant", True))
    causes: list[RootCause] = []
    quality = evidence.get("quality") or {}
    dq = [i for i in quality.get("issues", []) if abs(i["share"]) >= MATERIAL]
    for i in dq:
        causes.append(
            RootCause(kind="data_quality", segment=i["segment"], detail=i["detail"],
                      contribution=round(i["share"], 3), evidence=i["evidence"])
        )  # fmt: skip
    dq_segments = [i["segment"] for i in dq if i["segment"]]
    dq_whole = sum(i["share"] for i in dq if not i["segment"])
    season = evidence.get("seasonality") or {}
    if season.get("seasonal") and significant:
        causes.append(
            RootCause(
                kind="seasonality",
                contribution=round(
                    min(1.0, (season["best_change_pct"] or 0) / (season["change_pct"] or 1)), 3
                ),
                evidence=f"{season['best_lag_days']} days earlier the same windows moved "
                f"{pct(season['best_change_pct'])} (now {pct(season['change_pct'])})",
            )
        )
    ratio = evidence.get("ratio_decomposition")
    segments = evidence.get("segments") or {}
    if ratio and not significant:
        ratio = None  # a ratio within normal variation: its mix/rate split is a split of noise
    if ratio and ratio["driver"] == "mix":
        split = next(d for d in ratio["dimensions"] if d["dimension"] == ratio["dimension"])
        causes.append(
            RootCause(
                kind="mix_shift",
                segment={ratio["dimension"]: ratio["segment"]},
                contribution=round(ratio["driver_share"], 3),
                evidence=f"{ratio['dimension']}={ratio['segment']} share of {spec.denominator} moved "
                f"{split['top_mix_weight_change']:+.1%}; mix explains {num(split['mix'])} of the "
                f"{num(ratio['change'])} change",
            )
        )
    kind = "rate_change" if spec.is_ratio else "segment_change"
    elements = [] if ratio and ratio["driver"] == "mix" else segments.get("elements", [])
    for e in elements:
        if any(_overlaps(e["segment"], s) for s in dq_segments) or abs(dq_whole) >= DQ_DOMINATES:
            continue  # the data problem already explains this segment's move
        segment = e["segment"]
        d = drilled(evidence, segment)
        if d and not d["uniform"] and d["concentrated_in"]:
            segment = d["concentrated_in"]
        causes.append(
            RootCause(
                kind=kind,
                segment=segment,
                contribution=round(e["share"], 3),
                evidence=f"{seg(segment)}: {num(e['baseline'])} -> {num(e['current'])}, "
                f"{e['share']:.0%} of the change",
            )
        )
    if ratio and ratio["driver"] == "rate" and not elements:
        causes.append(
            RootCause(kind="rate_change", segment={ratio["dimension"]: ratio["segment"]},
                      contribution=round(ratio["driver_share"], 3),
                      evidence=f"the ratio moved inside {ratio['dimension']}={ratio['segment']}")
        )  # fmt: skip
    broad = segments.get("broad") or {}
    if broad.get("broad") and significant and abs(dq_whole) < DQ_DOMINATES:
        causes.append(
            RootCause(kind="broad_based", contribution=1.0,
                      evidence=f"every segment moved about {pct(broad['change_pct'])}")
        )  # fmt: skip
    if not causes and not significant:
        z = move.get("z")
        causes.append(
            RootCause(kind="no_change", contribution=None,
                      evidence=f"{pct(move.get('change_pct'))} is within normal variation"
                      + (f" (z={z:+.1f})" if z is not None else ""))
        )  # fmt: skip
    return causes


def _overlaps(a: dict[str, str], b: dict[str, str]) -> bool:
    return all(a.get(k) == v for k, v in b.items()) or all(b.get(k) == v for k, v in a.items())


def confidence(causes: list[RootCause], evidence: dict[str, Any]) -> Confidence:
    if not causes:
        return "low"
    top = causes[0]
    if top.kind == "no_change":
        z = (evidence.get("movement") or {}).get("z")
        return "high" if z is not None and abs(z) < 2 else "medium"
    share = abs(top.contribution or 0) if top.kind not in ("broad_based", "seasonality") else 1.0
    total = sum(abs(c.contribution or 0) for c in causes if c.kind != "broad_based")
    if share >= 0.6 or total >= 0.8:
        return "high"
    return "medium" if share >= 0.3 else "low"


def conclusion_text(causes: list[RootCause], evidence: dict[str, Any], spec: AnalysisSpec) -> str:
    move = evidence.get("movement") or {}
    head = (
        f"{spec.metric} went from {num(move.get('baseline'))} to {num(move.get('current'))} "
        f"({pct(move.get('change_pct'))}) in {spec.current.start}..{spec.current.end} vs "
        f"{spec.baseline.start}..{spec.baseline.end}."
    )
    if not causes:
        return head + " No root cause could be established from the evidence gathered."
    words = {
        "data_quality": lambda c: f"a data problem ({c.detail}, {seg(c.segment)})",
        "seasonality": lambda c: "seasonality (the same period a year earlier moved alike)",
        "mix_shift": lambda c: f"a mix shift away from {seg(c.segment)}",
        "rate_change": lambda c: f"the rate changing inside {seg(c.segment)}",
        "segment_change": lambda c: f"{seg(c.segment)}",
        "broad_based": lambda c: "a broad-based move across all segments",
        "no_change": lambda c: "nothing: the movement is within normal variation",
    }
    parts = [
        words[c.kind](c)
        + (f" ({abs(c.contribution):.0%} of the change)" if c.contribution not in (None, 1.0) else "")
        for c in causes[:3]
    ]
    if causes[0].kind == "no_change":
        z = move.get("z")
        against = f" (z={z:+.1f} against earlier windows)" if z is not None else ""
        return f"{head} That is within normal variation{against}: there is no root cause to find."
    return head + " Explained by " + "; ".join(parts) + "."
