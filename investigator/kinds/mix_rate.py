"""Mix and rate: a ratio (orders/sessions, revenue/orders) moves because the denominator's mix
shifted between segments whose ratios differ (mix), or because the ratio moved inside segments
(rate). The split is exact (`analysis.ratio`); this kind reads it.

Only for ratios, and only on a move outside normal variation (or one the history is too short to
call ordinary): the mix/rate split of noise is noise.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause, finite
from investigator.analysis.queries import BASE, CUR, whole
from investigator.analysis.ratio import DimensionSplit, MixPart, RatioDecomposition, mix_rate
from investigator.analysis.segments import SegmentExplanation
from investigator.analysis.shares import ratio_of
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.verify import size_problem
from investigator.fmt import num, seg
from investigator.kinds.base import Case, CheckData, Checked, Kind, Reading, Test
from investigator.kinds.common import LOCALIZE, MIN_SHARE, share_of, to_explain
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.hypotheses import HypothesisKind, Status, Update


def parts(split: DimensionSplit) -> list[MixPart]:
    """A dimension's mix parts; a split made before they were kept has its top value's only."""
    if split.parts:
        return split.parts
    return [MixPart(segment=split.top_mix_segment, mix=split.mix, weight_change=split.top_mix_weight_change)]


def _hypotheses(spec: AnalysisSpec) -> list[tuple[HypothesisKind, str]]:
    if not spec.is_ratio or not spec.dimensions:
        return []
    dims = ", ".join(spec.dimensions)
    return [
        (
            "mix",
            f"The ratio moved because the {spec.denominator} mix shifted between segments "
            f"of one dimension ({dims}) while each segment's ratio held.",
        ),
        ("rate", f"The ratio moved inside specific segments ({dims})."),
    ]


def _read(p: AnalysisResult) -> Reading | None:
    if isinstance(p, SegmentExplanation):  # localization found where the ratio moved
        if p.broad.broad or not p.elements:
            return None
        return Reading(None, [Update(kind="rate", status=Status.CONFIRMED, evidence=_localized(p))])
    if not isinstance(p, RatioDecomposition):
        return None
    split = next(d for d in p.dimensions if d.dimension == p.dimension)
    head = (
        f"Split the {num(p.baseline)} -> {num(p.current)} change of {p.metric} into mix and rate: "
        f"by {p.dimension}, mix {num(split.mix)} and rate {num(split.rate)}; "
    )
    if p.driver == "mix":  # one number per quantity: the dimension's mix, then each value's part
        top = parts(split)[0]
        part = top.mix / p.change if p.change else 0.0
        text = (
            f"{head}the driver is the mix across {p.dimension} ({p.driver_share:.0%} of the change), "
            f"led by {seg({p.dimension: top.segment})}'s part ({part:.0%} of the change)."
        )
    else:
        text = f"{head}the driver is rate in {p.dimension}={p.segment} ({p.driver_share:.0%} of the change)."
    if p.driver == "mix":
        return Reading(text, [
            Update(kind="mix", status=Status.CONFIRMED, evidence=text),
            Update(kind="rate", status=Status.RULED_OUT, evidence="segment ratios held"),
        ])  # fmt: skip
    return Reading(text, [
        Update(kind="rate", status=Status.CONFIRMED, evidence=text),
        Update(kind="mix", status=Status.RULED_OUT, evidence="the mix barely moved"),
    ])  # fmt: skip


def _localized(p: SegmentExplanation) -> str:
    desc = "; ".join(
        f"{seg(e.segment)} {num(e.baseline)} -> {num(e.current)} ({e.share:.0%} of the change)"
        for e in p.elements
    )
    return f"Localization over all dimension combinations points to: {desc}."


def _decide(case: Case) -> list[RootCause]:
    """On a move outside normal variation: the values whose shifting share of the denominator made
    the mix (when mix drove it), or the segment the ratio moved inside (when rate drove it and
    localization found no narrower segment and the move was not broad)."""
    ratio, segments = case.evidence.ratio, case.evidence.segments
    if ratio is None or not to_explain(case):
        return []
    if ratio.driver == "mix":
        return _mix_parts(ratio, case.spec)
    if ratio.driver == "rate" and not (segments and (segments.elements or segments.broad.broad)):
        return [
            RootCause(kind="rate_change", segment={ratio.dimension: ratio.segment},
                      contribution=share_of(ratio.driver_share),
                      evidence=f"the ratio moved inside {ratio.dimension}={ratio.segment}")
        ]  # fmt: skip
    return []


def _mix_parts(ratio: RatioDecomposition, spec: AnalysisSpec) -> list[RootCause]:
    """Each value's part of the mix (the parts of every value add up to the dimension's mix
    effect), largest first; a small part, one against the move, or the other side of the same
    shift (shares sum to 1) is left out."""
    split = next(d for d in ratio.dimensions if d.dimension == ratio.dimension)
    out = []
    found = parts(split)
    for i, p in enumerate(found[:3]):
        part = p.mix / ratio.change if ratio.change else 0.0
        if i and (
            abs(part) < MIN_SHARE or p.mix * ratio.change < 0 or p.weight_change * found[0].weight_change <= 0
        ):
            continue
        out.append(
            RootCause(
                kind="mix_shift",
                segment={ratio.dimension: p.segment},
                contribution=share_of(part),
                change=finite(p.mix),
                evidence=f"{seg({ratio.dimension: p.segment})} share of {spec.denominator} moved "
                f"{p.weight_change:+.1%}; its part of the mix is {num(p.mix)} of the "
                f"{num(ratio.change)} change ({ratio.dimension}'s whole mix: {num(split.mix)})",
            )
        )
    return out


def _words(c: RootCause, evidence: Evidence) -> str:
    """A mix shift toward the value that gained share of the denominator, away from one that lost it."""
    gained = {
        (d.dimension, p.segment)
        for d in (evidence.ratio.dimensions if evidence.ratio else [])
        for p in parts(d)
        if p.weight_change > 0
    }
    way = "toward" if next(iter(c.segment.items()), None) in gained else "away from"
    return f"a mix shift {way} {seg(c.segment)}"


def _check(d: CheckData, c: RootCause) -> Checked:
    spec, cube = d.spec, d.cube
    if spec.denominator is None or len(c.segment) != 1:
        return Checked("mix_shift needs a ratio metric and a one-dimension segment")
    dim = next(iter(c.segment))
    table = mix_rate(cube, spec, dim)
    tot = whole(cube, spec)  # a distinct count's total is its own count, not its leaves added up
    r0 = ratio_of(tot[BASE + spec.numerator], tot[BASE + spec.denominator])
    r1 = ratio_of(tot[CUR + spec.numerator], tot[CUR + spec.denominator])
    own = table.loc[table[dim] == str(c.segment[dim]), "mix"].sum()  # its part of the mix
    measured = float(own / (r1 - r0)) if r1 != r0 else None
    return Checked(size_problem(c.contribution, measured, d.tolerance), measured)


KIND = Kind(
    name="mix_rate",
    causes=("mix_shift", "rate_change"),
    hypotheses=_hypotheses,
    tests={
        "mix": Test(
            lambda e: e.ratio is not None,
            "decomposition = decompose_ratio(cube, spec)\nemit(decomposition)\n"
            "print(mix_rate(cube, spec, decomposition.dimension).to_string())",
            "Split the ratio's change into mix (denominator shares shifting) and rate (ratio within "
            "segments).",
        ),
        "rate": Test(
            lambda e: e.segments is not None,
            LOCALIZE,
            "Localize where the ratio moved within segments, at any depth.",
        ),
    },
    read=_read,
    decide=_decide,
    owns=lambda c, spec: c.kind == "mix_shift",
    confirms={"mix_shift": "mix"},
    words=_words,
    check=_check,
    needs_dimensions=True,
)
