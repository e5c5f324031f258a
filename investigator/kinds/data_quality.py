"""A data problem: missing partitions or rows, duplicated rows, incomplete recent days, nulls,
negative values, a value relabelled upstream, coverage that started in the window.

It comes first: a movement the data invented has no business cause, and a segment whose move a
data problem explains is not named again as a segment.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause, finite
from investigator.analysis.quality import QualityIssue, QualityReport, quality_checks
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.verify import size_problem
from investigator.fmt import seg
from investigator.kinds.base import Case, CheckData, Checked, Kind, Reading, Test, prepared
from investigator.kinds.common import share_of
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.hypotheses import HypothesisKind, Status, Update

# A data problem is a cause when it explains this share of the change: a missing partition or a
# duplicated period is certain, so a smaller share counts than for a heuristic (late data, nulls).
MATERIAL = {"missing_data": 0.1, "duplicates": 0.1}
MATERIAL_DEFAULT = 0.25
EXPLAINED = 0.7  # a whole-metric issue that more specific ones explain this much of is not listed
DQ_DOMINATES = 0.7  # whole-metric problems this large explain the move: no business cause is left


def material_issues(quality: QualityReport | None) -> list[QualityIssue]:
    """The data problems worth listing, most important first: those that moved the metric the
    way it moved, by a material share. A whole-metric issue on the same
    periods as segment issues that account for most of its effect (a country's missing day makes
    the whole last day look late) is the same problem seen from further away: it is dropped."""
    change = quality.numerator_change if quality else 0.0
    issues = [
        i
        for i in (quality.issues if quality else [])
        if abs(i.share) >= MATERIAL.get(i.detail, MATERIAL_DEFAULT) and i.effect * change > 0
    ]  # a problem that pushed the metric the other way cannot explain how it moved
    specific = [i for i in issues if i.segment]

    def explained(whole: QualityIssue) -> bool:
        same = [i for i in specific if set(i.days) & set(whole.days)]
        return bool(whole.effect) and sum(i.effect for i in same) / whole.effect >= EXPLAINED

    return [i for i in issues if i.segment or not explained(i)]


def explains_all(case: Case) -> bool:
    """Whole-metric data problems that explain most of the move leave nothing to other kinds."""
    whole = sum(i.share for i in material_issues(case.evidence.quality) if not i.segment)
    return abs(whole) >= DQ_DOMINATES


def relabelled(evidence: Evidence) -> list[dict[str, str]]:
    """Both labels of every value renamed upstream: neither label is a business cause."""
    issues = evidence.quality.issues if evidence.quality else []
    return [s for i in issues if i.detail == "relabelled" for s in (i.segment, i.renamed_to) if s]


def relabel_note(evidence: Evidence) -> str:
    """A value renamed upstream, named with both its labels: its old label falls and its new one
    rises in the segment table, and a person must read the two as one."""
    issues = evidence.quality.issues if evidence.quality else []
    renamed = [i for i in issues if i.detail == "relabelled" and i.segment and i.renamed_to]
    into: dict[str, list[str]] = {}
    for i in renamed:  # several values merged into one are one sentence, not several relabels
        into.setdefault(seg(i.renamed_to), []).append(seg(i.segment))
    return "".join(
        f" Relabelled, compared as one segment: {olds[0]} became {new}."
        if len(olds) == 1
        else f" Merged, compared as one segment: {', '.join(olds)} became {new}."
        for new, olds in list(into.items())[:3]
    )


def _hypotheses(spec: AnalysisSpec) -> list[tuple[HypothesisKind, str]]:
    return [
        (
            "data_quality",
            "The movement is a data artefact: missing partitions, duplicated rows or incomplete recent days.",
        )
    ]


def _read(r: AnalysisResult) -> Reading | None:
    if not isinstance(r, QualityReport):
        return None
    if not r.issues:
        return Reading(
            "Checked duplicates, missing partitions, late data, nulls and negatives: no issue found.",
            [Update(kind="data_quality", status=Status.RULED_OUT, evidence="no data-quality issue")],
        )
    top = r.issues[0]
    text = (
        f"Data-quality checks found {len(r.issues)} issue(s); the largest is {top.detail} "
        f"({seg(top.segment)}): {top.evidence}, about {top.share:.0%} of the change."
    )
    bad = sum(i.non_finite for i in r.issues)
    if bad and not top.non_finite:  # bad values are always said, however small their effect
        text += f" {bad:,} NaN or infinite values were left out of the sums as missing."
    if material_issues(r):
        return Reading(
            text + " The movement is at least partly a data artefact.",
            [Update(kind="data_quality", status=Status.CONFIRMED, evidence=f"{top.detail}: {top.evidence}")],
        )
    return Reading(
        text + " Too small to explain the movement.",
        [
            Update(
                kind="data_quality",
                status=Status.RULED_OUT,
                evidence="issues too small to explain the change",
            )
        ],
    )


def _decide(case: Case) -> list[RootCause]:
    return [
        RootCause(kind="data_quality", segment=i.segment, detail=i.detail, contribution=share_of(i.share),
                  change=finite(i.effect), evidence=i.evidence)
        for i in material_issues(case.evidence.quality)
    ]  # fmt: skip


def _quality(d: CheckData) -> QualityReport:
    return quality_checks(d.table, d.spec, d.daily)


def _check(d: CheckData, c: RootCause) -> Checked:
    q = prepared(d, "quality", _quality)  # once for every data-quality cause listed
    match = [x for x in q.issues if x.detail == c.detail and x.segment == c.segment]
    if not match:
        return Checked(f"no {c.detail} issue for {c.segment or 'the whole metric'}")
    measured = match[0].share
    return Checked(size_problem(c.contribution, measured, d.tolerance), measured)


KIND = Kind(
    name="data_quality",
    causes=("data_quality",),
    hypotheses=_hypotheses,
    tests={
        "data_quality": Test(
            lambda e: e.quality is not None,
            "quality = quality_checks(table, spec, daily, history)\nemit(quality)",
            "Rule out a data artefact first: a missing partition or duplicated day fakes a movement.",
        )
    },
    read=_read,
    decide=_decide,
    owns=lambda c, spec: c.kind == "data_quality",
    confirms={"data_quality": "data_quality"},
    words=lambda c, e: f"a data problem ({c.detail}, {seg(c.segment)})",
    check=_check,
    # every run tests the data first, and few have a problem to claim: the host's own quality
    # checks start once the kernel's found one, while the kernel goes on with the other hypotheses
    ahead={"quality": _quality},
    ahead_when=lambda evidence, code: bool(material_issues(evidence.quality)),
)
