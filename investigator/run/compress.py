"""Compress a step's output into a 2-3 sentence finding, plus the hypothesis updates it implies.

Structured results (published with `emit`) are summarised by kind; anything else is cut to its
first lines. The full output goes to disk, never into the context.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from investigator.run.decision import Decision
from investigator.run.hypotheses import Status
from sandbox.models import ExecResult


class Update(BaseModel):
    """Set a hypothesis, named by id or by kind (data_quality, seasonality, ...), to a status."""

    kind: str = ""
    hypothesis_id: str | None = None
    status: Status
    evidence: str


class Compressed(BaseModel):
    summary: str
    updates: list[Update] = Field(default_factory=list)
    evidence: dict[str, Any] = Field(default_factory=dict)  # structured results by kind
    error: bool = False


def num(x: float | None) -> str:
    if x is None:
        return "n/a"
    a = abs(x)
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.2f}{suffix}"
    return f"{x:.4g}" if a < 1 else f"{x:,.1f}"


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def drill_key(segment: dict[str, str]) -> str:
    return "drill_down:" + "&".join(f"{k}={v}" for k, v in sorted(segment.items()))


def seg(segment: dict[str, str]) -> str:
    return " & ".join(f"{k}={v}" for k, v in segment.items()) or "(whole metric)"


def compress(decision: Decision, result: ExecResult) -> Compressed:
    if not result.ok and result.error is not None:
        tried = decision.rationale.split(".")[0]
        return Compressed(
            summary=f"Tried: {tried}. The code failed with {result.error.name}: {result.error.value[:200]}.",
            error=True,
        )
    out = Compressed(summary="")
    parts = []
    for item in result.data:
        payload = item.get("result") if isinstance(item, dict) else None
        kind = payload.get("kind") if isinstance(payload, dict) else None
        summarise = SUMMARISERS.get(kind or "")
        if summarise is None or payload is None:
            continue
        text, updates = summarise(payload)
        parts.append(text)
        out.updates += updates
        key = drill_key(payload["segment"]) if kind == "drill_down" else str(kind)
        out.evidence[key] = payload
    if not parts:
        first = " ".join(result.text().split())[:300]
        parts.append(f"{decision.rationale.split('.')[0]}. Output: {first or '(nothing printed)'}")
    out.summary = " ".join(parts)
    return out


def _movement(p: dict[str, Any]) -> tuple[str, list[Update]]:
    z = p.get("z")
    basis = (
        f"z={z:+.1f} against {p['history_points']} earlier windows"
        if z is not None
        else "too little history for a z-score"
    )
    verdict = "outside normal variation" if p["significant"] else "within normal variation"
    return (
        f"Measured {p['metric']}: {num(p['current'])} vs baseline {num(p['baseline'])} "
        f"({pct(p['change_pct'])}), {basis}. The movement is {verdict}.",
        [],
    )


def _quality(p: dict[str, Any]) -> tuple[str, list[Update]]:
    issues = p["issues"]
    material = [i for i in issues if abs(i["share"]) >= 0.25]
    if not issues:
        return "Checked duplicates, missing partitions, late data, nulls and negatives: no issue found.", [
            Update(kind="data_quality", status=Status.RULED_OUT, evidence="no data-quality issue")
        ]
    top = issues[0]
    text = (
        f"Data-quality checks found {len(issues)} issue(s); the largest is {top['detail']} "
        f"({seg(top['segment'])}): {top['evidence']}, about {top['share']:.0%} of the change."
    )
    if material:
        return text + " The movement is at least partly a data artefact.", [
            Update(
                kind="data_quality", status=Status.CONFIRMED, evidence=f"{top['detail']}: {top['evidence']}"
            )
        ]
    return text + " Too small to explain the movement.", [
        Update(
            kind="data_quality", status=Status.RULED_OUT, evidence="issues too small to explain the change"
        )
    ]


def _seasonality(p: dict[str, Any]) -> tuple[str, list[Update]]:
    if not p["available"]:
        return (
            "Seasonality cannot be tested: the history does not reach the comparable period a year back.",
            [
                Update(
                    kind="seasonality", status=Status.RULED_OUT, evidence="no comparable period in the data"
                )
            ],
        )
    text = (
        f"Compared with the same windows {p['best_lag_days']} days earlier: "
        f"then {pct(p['best_change_pct'])}, "
        f"now {pct(p['change_pct'])}."
    )
    if p["seasonal"]:
        return text + " The same movement happened before: it is seasonal.", [
            Update(kind="seasonality", status=Status.CONFIRMED, evidence=text)
        ]
    return text + " Not a repeat of an earlier period.", [
        Update(kind="seasonality", status=Status.RULED_OUT, evidence=text)
    ]


def _segments(p: dict[str, Any]) -> tuple[str, list[Update]]:
    broad, elements = p["broad"], p["elements"]
    if broad["broad"]:
        disp = max((d["dispersion"] for d in broad["dimensions"]), default=0.0)
        text = (
            f"Every segment moved alike ({pct(broad['change_pct'])} overall; the largest spread of "
            f"segment changes is {disp:.0%} of the change): the change is broad-based."
        )
        return text, [
            Update(kind="broad_based", status=Status.CONFIRMED, evidence=text),
            Update(kind="segments", status=Status.RULED_OUT, evidence="no segment stands out"),
        ]
    if not elements:
        return "Localization found no segment that stands out from noise, and segments did not move alike.", [
            Update(kind="segments", status=Status.RULED_OUT, evidence="no segment stands out"),
            Update(kind="broad_based", status=Status.RULED_OUT, evidence="segments did not move alike"),
        ]
    desc = "; ".join(
        f"{seg(e['segment'])} {num(e['baseline'])} -> {num(e['current'])} ({e['share']:.0%} of the change)"
        for e in elements
    )
    text = f"Localization over all dimension combinations points to: {desc}."
    return text, [
        Update(kind="segments", status=Status.CONFIRMED, evidence=text),
        Update(kind="rate", status=Status.CONFIRMED, evidence=text),
        Update(kind="broad_based", status=Status.RULED_OUT, evidence="specific segments explain the change"),
    ]


def _drill(p: dict[str, Any]) -> tuple[str, list[Update]]:
    head = (
        f"Inside {seg(p['segment'])} ({pct(p['segment_change_pct'])}, {p['share_of_total']:.0%} of the "
        "total change)"
    )
    if p["uniform"]:
        return head + " every child segment moved alike: the cause is the segment itself.", []
    return head + f" the change is held by {seg(p['concentrated_in'])}: the cause is narrower.", []


def _ratio(p: dict[str, Any]) -> tuple[str, list[Update]]:
    split = next(d for d in p["dimensions"] if d["dimension"] == p["dimension"])
    text = (
        f"Split the {num(p['baseline'])} -> {num(p['current'])} change of {p['metric']} into mix and rate: "
        f"by {p['dimension']}, mix {num(split['mix'])} and rate {num(split['rate'])}; "
        f"the driver is {p['driver']} "
        f"in {p['dimension']}={p['segment']} ({p['driver_share']:.0%} of the change)."
    )
    if p["driver"] == "mix":
        return text, [
            Update(kind="mix", status=Status.CONFIRMED, evidence=text),
            Update(kind="rate", status=Status.RULED_OUT, evidence="segment ratios held"),
        ]
    return text, [
        Update(kind="rate", status=Status.CONFIRMED, evidence=text),
        Update(kind="mix", status=Status.RULED_OUT, evidence="the mix barely moved"),
    ]


SUMMARISERS = {
    "movement": _movement,
    "quality": _quality,
    "seasonality": _seasonality,
    "segments": _segments,
    "drill_down": _drill,
    "ratio_decomposition": _ratio,
}
