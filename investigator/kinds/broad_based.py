"""A broad-based move: every segment moved about alike, so no segment is the cause and naming the
largest would be wrong (it is largest because it is big). Not when a data problem or a season
already explains the move, nor after a mix shift (one story: the segments' own ratios held), and
only on a move outside normal variation or one too short a history cannot call ordinary."""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.segments import BroadBased, SegmentExplanation, broad_based
from investigator.analysis.spec import AnalysisSpec
from investigator.fmt import pct, value
from investigator.kinds import data_quality, seasonality
from investigator.kinds.base import Case, CheckData, Checked, Kind, Reading, Test, prepared
from investigator.kinds.common import LOCALIZE, to_explain
from investigator.run.evidence import AnalysisResult
from investigator.run.hypotheses import HypothesisKind, Status, Update


def words(segments: SegmentExplanation, spec: AnalysisSpec) -> str:
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


def _hypotheses(spec: AnalysisSpec) -> list[tuple[HypothesisKind, str]]:
    if not spec.dimensions:
        return []  # a single series: nothing to call broad
    return [("broad_based", "Every segment moved alike: the change is broad-based.")]


def _read(p: AnalysisResult) -> Reading | None:
    if not isinstance(p, SegmentExplanation):
        return None
    if p.broad.broad:
        disp = max((d.dispersion for d in p.broad.dimensions), default=0.0)
        text = (
            f"Every segment moved alike ({pct(p.broad.change_pct)} overall; the largest spread of "
            f"segment changes is {disp:.0%} of the change): the change is broad-based."
        )
        return Reading(text, [Update(kind="broad_based", status=Status.CONFIRMED, evidence=text)])
    why = "specific segments explain the change" if p.elements else "segments did not move alike"
    return Reading(None, [Update(kind="broad_based", status=Status.RULED_OUT, evidence=why)])


def _decide(case: Case) -> list[RootCause]:
    segments = case.evidence.segments
    if segments is None or not segments.broad.broad or not to_explain(case):
        return []
    if data_quality.explains_all(case) or seasonality.seasonal(case):
        return []  # the data problem or the season moved everything alike
    if any(c.kind == "mix_shift" for c in case.causes):
        return []  # a mix shift says the segments' ratios held: "every segment moved alike" contradicts it
    return [RootCause(kind="broad_based", contribution=1.0, evidence=words(segments, case.spec))]


def _broad(d: CheckData) -> BroadBased:
    return broad_based(d.cube, d.spec)


def _check(d: CheckData, c: RootCause) -> Checked:
    return Checked(None if prepared(d, "broad", _broad).broad else "segments did not move alike")


KIND = Kind(
    name="broad_based",
    causes=("broad_based",),
    late=("broad_based",),
    hypotheses=_hypotheses,
    tests={
        "broad_based": Test(
            lambda e: e.segments is not None, LOCALIZE, "Check whether every segment moved alike."
        )
    },
    read=_read,
    decide=_decide,
    owns=lambda c, spec: c.kind == "broad_based",
    confirms={"broad_based": "broad_based"},
    words=lambda c, e: "a broad-based move across all segments",
    check=_check,
    needs_dimensions=True,
    ahead={"broad": _broad},
)
