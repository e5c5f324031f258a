"""Compress a step's output into a 2-3 sentence finding, plus the hypothesis updates it implies.

Structured results (published with `emit`, parsed once in `evidence.py`) are summarised by kind;
anything else is cut to its first lines. The full output goes to disk, never into the context.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from investigator.analysis.movement import Movement
from investigator.analysis.quality import QualityReport
from investigator.analysis.ratio import RatioDecomposition
from investigator.analysis.seasonality import Seasonality
from investigator.analysis.segments import DrillDown, SegmentExplanation
from investigator.fmt import num, pct, seg
from investigator.run.decision import Decision
from investigator.run.evidence import AnalysisResult, material_issues, parse_results
from investigator.run.hypotheses import HypothesisKind, Status
from sandbox.models import ExecResult


class Update(BaseModel):
    """Set a hypothesis, named by id or by kind (data_quality, seasonality, ...), to a status."""

    kind: HypothesisKind | None = None
    hypothesis_id: str | None = None
    status: Status
    evidence: str


class Compressed(BaseModel):
    summary: str
    updates: list[Update] = Field(default_factory=list)
    results: list[AnalysisResult] = Field(default_factory=list)  # the step's typed results
    error: bool = False


Summary = tuple[str, list[Update]]


def compress(decision: Decision, result: ExecResult) -> Compressed:
    if not result.ok and result.error is not None:
        tried = decision.rationale.split(".")[0]
        return Compressed(
            summary=f"Tried: {tried}. The code failed with {result.error.name}: {result.error.value[:200]}.",
            error=True,
        )
    results = parse_results(result)
    parts, updates = [], []
    for r in results:
        summary = summarise(r)
        if summary is not None:
            parts.append(summary[0])
            updates += summary[1]
    if not parts:
        first = " ".join(result.text().split())[:300]
        parts.append(f"{decision.rationale.split('.')[0]}. Output: {first or '(nothing printed)'}")
    return Compressed(summary=" ".join(parts), updates=updates, results=results)


def summarise(r: AnalysisResult) -> Summary | None:
    """A finding and its hypothesis updates for one result; None for kinds that are not findings."""
    if isinstance(r, Movement):
        return movement(r)
    if isinstance(r, QualityReport):
        return quality(r)
    if isinstance(r, Seasonality):
        return seasonality(r)
    if isinstance(r, SegmentExplanation):
        return segments(r)
    if isinstance(r, DrillDown):
        return drill(r)
    if isinstance(r, RatioDecomposition):
        return ratio(r)
    return None  # BroadBased alone, Verification: read by the loop, not findings


def movement(p: Movement) -> Summary:
    basis = (
        f"z={p.z:+.1f} against {p.history_points} earlier windows"
        if p.z is not None
        else "too little history for a z-score"
    )
    verdict = "outside normal variation" if p.significant else "within normal variation"
    return (
        f"Measured {p.metric}: {num(p.current)} vs baseline {num(p.baseline)} "
        f"({pct(p.change_pct)}), {basis}. The movement is {verdict}.",
        [],
    )


def quality(p: QualityReport) -> Summary:
    if not p.issues:
        return "Checked duplicates, missing partitions, late data, nulls and negatives: no issue found.", [
            Update(kind="data_quality", status=Status.RULED_OUT, evidence="no data-quality issue")
        ]
    top = p.issues[0]
    text = (
        f"Data-quality checks found {len(p.issues)} issue(s); the largest is {top.detail} "
        f"({seg(top.segment)}): {top.evidence}, about {top.share:.0%} of the change."
    )
    bad = sum(i.non_finite for i in p.issues)
    if bad and not top.non_finite:  # bad values are always said, however small their effect
        text += f" {bad:,} NaN or infinite values were left out of the sums as missing."
    if material_issues(p):
        return text + " The movement is at least partly a data artefact.", [
            Update(kind="data_quality", status=Status.CONFIRMED, evidence=f"{top.detail}: {top.evidence}")
        ]
    return text + " Too small to explain the movement.", [
        Update(
            kind="data_quality", status=Status.RULED_OUT, evidence="issues too small to explain the change"
        )
    ]


def seasonality(p: Seasonality) -> Summary:
    if p.available and p.best_lag_days is None:
        why = "no earlier comparable period has a measurable change (a zero baseline)"
        return f"Seasonality cannot be tested: {why}.", [
            Update(kind="seasonality", status=Status.NOT_TESTABLE, evidence=f"not testable: {why}")
        ]
    if not p.available:
        why = getattr(p, "reason", None) or "the history does not reach the comparable period a year back"
        return f"Seasonality cannot be tested: {why}.", [
            Update(kind="seasonality", status=Status.NOT_TESTABLE, evidence=f"not testable: {why}")
        ]
    text = (
        f"Compared with the same windows {p.best_lag or f'{p.best_lag_days} days'} earlier: "
        f"then {pct(p.best_change_pct)}, now {pct(p.change_pct)}."
    )
    if p.seasonal:
        return text + " The same movement happened before: it is seasonal.", [
            Update(kind="seasonality", status=Status.CONFIRMED, evidence=text)
        ]
    return text + " Not a repeat of an earlier period.", [
        Update(kind="seasonality", status=Status.RULED_OUT, evidence=text)
    ]


def segments(p: SegmentExplanation) -> Summary:
    if p.broad.broad:
        disp = max((d.dispersion for d in p.broad.dimensions), default=0.0)
        text = (
            f"Every segment moved alike ({pct(p.broad.change_pct)} overall; the largest spread of "
            f"segment changes is {disp:.0%} of the change): the change is broad-based."
        )
        return text, [
            Update(kind="broad_based", status=Status.CONFIRMED, evidence=text),
            Update(kind="segments", status=Status.RULED_OUT, evidence="no segment stands out"),
        ]
    if not p.elements:
        return "Localization found no segment that stands out from noise, and segments did not move alike.", [
            Update(kind="segments", status=Status.RULED_OUT, evidence="no segment stands out"),
            Update(kind="broad_based", status=Status.RULED_OUT, evidence="segments did not move alike"),
        ]
    desc = "; ".join(
        f"{seg(e.segment)} {num(e.baseline)} -> {num(e.current)} ({e.share:.0%} of the change)"
        for e in p.elements
    )
    text = f"Localization over all dimension combinations points to: {desc}."
    return text, [
        Update(kind="segments", status=Status.CONFIRMED, evidence=text),
        Update(kind="rate", status=Status.CONFIRMED, evidence=text),
        Update(kind="broad_based", status=Status.RULED_OUT, evidence="specific segments explain the change"),
    ]


def drill(p: DrillDown) -> Summary:
    head = (
        f"Inside {seg(p.segment)} ({pct(p.segment_change_pct)}, {p.share_of_total:.0%} of the total change)"
    )
    if p.uniform:
        return head + " every child segment moved alike: the cause is the segment itself.", []
    return head + f" the change is held by {seg(p.concentrated_in)}: the cause is narrower.", []


def ratio(p: RatioDecomposition) -> Summary:
    split = next(d for d in p.dimensions if d.dimension == p.dimension)
    text = (
        f"Split the {num(p.baseline)} -> {num(p.current)} change of {p.metric} into mix and rate: "
        f"by {p.dimension}, mix {num(split.mix)} and rate {num(split.rate)}; "
        f"the driver is {p.driver} "
        f"in {p.dimension}={p.segment} ({p.driver_share:.0%} of the change)."
    )
    if p.driver == "mix":
        return text, [
            Update(kind="mix", status=Status.CONFIRMED, evidence=text),
            Update(kind="rate", status=Status.RULED_OUT, evidence="segment ratios held"),
        ]
    return text, [
        Update(kind="rate", status=Status.CONFIRMED, evidence=text),
        Update(kind="mix", status=Status.RULED_OUT, evidence="the mix barely moved"),
    ]
