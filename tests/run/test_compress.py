"""Each result kind's finding text and hypothesis updates, and `compress` on a step's output."""

from __future__ import annotations

from typing import Any

import pytest

from investigator.analysis.movement import Movement
from investigator.analysis.quality import QualityIssue, QualityReport
from investigator.analysis.ratio import DimensionSplit, RatioDecomposition
from investigator.analysis.seasonality import SeasonalComparison, Seasonality
from investigator.analysis.segments import BroadBased, DimensionSpread, DrillDown, Segment, SegmentExplanation
from investigator.run import compress as c
from investigator.run.decision import Decision, DecisionType
from investigator.run.evidence import AnalysisResult
from investigator.run.hypotheses import Status
from sandbox.models import Emitted, ExecError, ExecResult

CONFIRMED, RULED_OUT, NOT_TESTABLE = Status.CONFIRMED, Status.RULED_OUT, Status.NOT_TESTABLE


def updates(summary: c.Summary) -> list[tuple[str | None, Status]]:
    return [(u.kind, u.status) for u in summary[1]]


def summarised(result: AnalysisResult) -> c.Summary:
    """`c.summarise` of a result that is a finding (never None)."""
    summary = c.summarise(result)
    assert summary is not None
    return summary


def movement(z: float | None = -5.24, significant: bool = True) -> Movement:
    return Movement(
        metric="revenue",
        current=864_630.0,
        baseline=1_012_000.0,
        change=-147_370.0,
        change_pct=-0.14562,
        z=z,
        history_points=20 if z is not None else 3,
        history_median_pct=0.0,
        history_spread_pct=0.03,
        significant=significant,
    )


def issue(share: float, segment: dict[str, str] | None = None, detail: str = "missing_data") -> QualityIssue:
    return QualityIssue(
        detail=detail,
        segment=segment or {},
        effect=-100.0,
        share=share,
        evidence="country=JP has no rows on 3 of 7 current days",
    )


def quality(*issues: QualityIssue) -> QualityReport:
    return QualityReport(metric="revenue", numerator_change=-250.0, issues=list(issues))


def season(available: bool = True, seasonal: bool = True, then: float | None = -0.1321) -> Seasonality:
    return Seasonality(
        metric="revenue",
        change_pct=-0.14562,
        comparisons=[SeasonalComparison(lag_days=364, change_pct=then)] if available else [],
        best_lag_days=364 if available else None,
        best_change_pct=then if available else None,
        seasonal=seasonal,
        available=available,
    )


def segments(elements: list[Segment], broad: bool = False) -> SegmentExplanation:
    spreads = [
        DimensionSpread(dimension="country", dispersion=0.123, min_pct=-0.2, max_pct=-0.05),
        DimensionSpread(dimension="platform", dispersion=0.08, min_pct=-0.15, max_pct=-0.1),
    ]
    return SegmentExplanation(
        metric="revenue",
        total_change=-1200.0,
        change_pct=-0.1,
        elements=elements,
        broad=BroadBased(metric="revenue", change_pct=-0.1, dimensions=spreads, broad=broad),
    )


def drill(concentrated_in: dict[str, str] | None = None) -> DrillDown:
    return DrillDown(
        metric="revenue",
        segment={"country": "JP"},
        segment_change=-500.0,
        segment_change_pct=-0.5,
        share_of_total=0.904,
        uniform=not concentrated_in,
        concentrated_in=concentrated_in or {},
    )


def ratio(driver: str) -> RatioDecomposition:
    def split(dim: str, mix: float, rate: float) -> DimensionSplit:
        return DimensionSplit(
            dimension=dim, mix=mix, rate=rate, top_mix_segment="paid", top_mix=mix,
            top_mix_weight_change=-0.1, top_rate_segment="paid", top_rate=rate, rate_concentration=0.9,
            mix_concentration=0.9,
        )  # fmt: skip

    return RatioDecomposition(
        metric="orders/sessions",
        baseline=0.05,
        current=0.0412,
        change=-0.0088,
        dimensions=[split("country", -0.0001, -0.0087), split("channel", -0.0071, -0.0017)],
        driver=driver,
        dimension="channel",
        segment="paid",
        driver_share=0.807,
    )


# summarisers ---------------------------------------------------------------------------------------


def test_movement_outside_normal_variation() -> None:
    text, ups = c.movement(movement())
    assert text == (
        "Measured revenue: 864.63k vs baseline 1.01M (-14.6%), z=-5.2 against 20 earlier windows. "
        "The movement is outside normal variation."
    )
    assert ups == []


def test_movement_without_history() -> None:
    text, _ = c.movement(movement(z=None, significant=False))
    assert "(-14.6%), too little history for a z-score. The movement is within normal variation." in text


def test_quality_without_issues_rules_data_quality_out() -> None:
    s = summarised(quality())
    assert s[0] == "Checked duplicates, missing partitions, late data, nulls and negatives: no issue found."
    assert updates(s) == [("data_quality", RULED_OUT)]


def test_a_material_quality_issue_confirms_data_quality() -> None:
    s = summarised(quality(issue(0.4, {"country": "JP"}), issue(0.05, detail="duplicates")))
    assert s[0] == (
        "Data-quality checks found 2 issue(s); the largest is missing_data (country=JP): country=JP has "
        "no rows on 3 of 7 current days, about 40% of the change. The movement is at least partly a data "
        "artefact."
    )
    assert updates(s) == [("data_quality", CONFIRMED)]
    assert s[1][0].evidence == "missing_data: country=JP has no rows on 3 of 7 current days"


@pytest.mark.parametrize("share", [0.25, -0.3])
def test_materiality_is_on_the_size_of_the_share(share: float) -> None:
    assert updates(summarised(quality(issue(share)))) == [("data_quality", CONFIRMED)]


def test_immaterial_quality_issues_rule_data_quality_out() -> None:
    s = summarised(quality(issue(0.24, detail="incomplete_recent_data"), issue(-0.09)))
    assert (
        "the largest is incomplete_recent_data ((whole metric))" in s[0] and "about 24% of the change" in s[0]
    )
    assert s[0].endswith(" Too small to explain the movement.")
    assert updates(s) == [("data_quality", RULED_OUT)]


def test_seasonality_confirmed() -> None:
    s = summarised(season())
    assert s[0] == (
        "Compared with the same windows 364 days earlier: then -13.2%, now -14.6%. "
        "The same movement happened before: it is seasonal."
    )
    assert updates(s) == [("seasonality", CONFIRMED)]


def test_seasonality_ruled_out() -> None:
    s = summarised(season(seasonal=False, then=0.031))
    assert s[0] == (
        "Compared with the same windows 364 days earlier: then +3.1%, now -14.6%. "
        "Not a repeat of an earlier period."
    )
    assert updates(s) == [("seasonality", RULED_OUT)]


def test_seasonality_without_a_comparable_period_is_not_testable() -> None:
    s = summarised(season(available=False, seasonal=False))
    assert s[0] == (
        "Seasonality cannot be tested: the history does not reach the comparable period a year back."
    )
    assert updates(s) == [("seasonality", NOT_TESTABLE)]


def test_seasonality_with_no_measurable_comparison_is_not_ruled_out() -> None:
    p = Seasonality(
        metric="revenue",
        change_pct=None,  # the current baseline is 0
        comparisons=[SeasonalComparison(lag_days=364, change_pct=None)],
        best_lag_days=None,
        best_change_pct=None,
        seasonal=False,
        available=True,
    )
    s = summarised(p)
    assert "None" not in s[0]
    assert updates(s) != [("seasonality", RULED_OUT)]


def test_broad_based_segments() -> None:
    s = summarised(segments([], broad=True))
    assert s[0] == (
        "Every segment moved alike (-10.0% overall; the largest spread of segment changes is 12% of the "
        "change): the change is broad-based."
    )
    assert sorted(updates(s)) == [("broad_based", CONFIRMED), ("segments", RULED_OUT)]


def test_no_segment_stands_out_and_not_broad() -> None:
    s = summarised(segments([]))
    assert s[0].startswith("Localization found no segment that stands out")
    assert updates(s) == [("segments", RULED_OUT), ("broad_based", RULED_OUT)]


def test_localized_segments() -> None:
    elements = [
        Segment(segment={"country": "JP"}, current=500.0, baseline=1500.0, change=-1000.0, share=0.833),
        Segment(
            segment={"country": "DE", "platform": "ios"},
            current=0.5,
            baseline=200.0,
            change=-199.5,
            share=0.166,
        ),
    ]
    s = summarised(segments(elements))
    assert s[0] == (
        "Localization over all dimension combinations points to: country=JP 1.50k -> 500.0 (83% of the "
        "change); country=DE & platform=ios 200.0 -> 0.5 (17% of the change)."
    )
    assert sorted(updates(s)) == [("broad_based", RULED_OUT), ("rate", CONFIRMED), ("segments", CONFIRMED)]


def test_a_uniform_drill_down() -> None:
    s = summarised(drill())
    assert s == (
        "Inside country=JP (-50.0%, 90% of the total change) every child segment moved alike: "
        "the cause is the segment itself.",
        [],
    )


def test_a_concentrated_drill_down() -> None:
    text, ups = summarised(drill({"country": "JP", "platform": "ios"}))
    assert text == (
        "Inside country=JP (-50.0%, 90% of the total change) the change is held by "
        "country=JP & platform=ios: the cause is narrower."
    )
    assert ups == []


def test_a_mix_driven_ratio() -> None:
    s = summarised(ratio("mix"))
    assert s[0] == (
        "Split the 0.05 -> 0.0412 change of orders/sessions into mix and rate: by channel, mix -0.0071 and "
        "rate -0.0017; the driver is the mix across channel (81% of the change), led by channel=paid's part "
        "(81% of the change)."
    )
    assert updates(s) == [("mix", CONFIRMED), ("rate", RULED_OUT)]


def test_a_rate_driven_ratio() -> None:
    s = summarised(ratio("rate"))
    assert "the driver is rate in channel=paid" in s[0] and "by channel, mix -0.0071" in s[0]
    assert updates(s) == [("rate", CONFIRMED), ("mix", RULED_OUT)]


def test_summarise_dispatches_by_kind_and_skips_non_findings() -> None:
    assert c.summarise(movement()) == c.movement(movement())
    assert c.summarise(segments([]).broad) is None


# compress ------------------------------------------------------------------------------------------

DECISION = Decision(
    type=DecisionType.ANALYZE, rationale="Measure the movement. Then look at segments.", code="x"
)


def emitted(*payloads: Any, stdout: str = "") -> ExecResult:
    return ExecResult(ok=True, stdout=stdout, data=[Emitted(result=p) for p in payloads])


def test_compress_turns_emitted_payloads_into_typed_results_and_findings() -> None:
    m, q = movement(), quality(issue(0.4, {"country": "JP"}))
    out = c.compress(DECISION, emitted(m.model_dump(mode="json"), q.model_dump(mode="json"), stdout="noise"))
    assert out.results == [m, q]
    assert out.summary == c.movement(m)[0] + " " + summarised(q)[0]
    assert [(u.kind, u.status) for u in out.updates] == [("data_quality", CONFIRMED)]
    assert not out.error


@pytest.mark.parametrize(
    "payload",
    [
        {"kind": "forecast", "metric": "revenue"},  # not a known kind
        {**movement().model_dump(mode="json"), "z": "very large"},  # a known kind that does not validate
        {"kind": "movement", "metric": "revenue"},
        [1, 2, 3],
        "a string",
    ],
)
def test_compress_ignores_payloads_that_are_not_results_and_falls_back_to_the_output(payload: Any) -> None:
    out = c.compress(DECISION, emitted(payload, stdout="total   864630\n\n  by country\n"))
    assert out.results == [] and out.updates == []
    assert out.summary == "Measure the movement. Output: total 864630 by country"
    assert not out.error


def test_compress_keeps_a_valid_result_beside_an_invalid_one() -> None:
    out = c.compress(DECISION, emitted({"kind": "movement"}, movement().model_dump(mode="json")))
    assert out.results == [movement()]
    assert out.summary.startswith("Measured revenue: 864.63k")


def test_compress_falls_back_when_only_non_findings_were_emitted() -> None:
    broad = segments([]).broad
    out = c.compress(DECISION, emitted(broad.model_dump(mode="json")))
    assert out.results == [broad]  # kept as evidence for the loop, but not a finding
    assert out.summary == "Measure the movement. Output: (nothing printed)"


def test_compress_cuts_the_fallback_output() -> None:
    out = c.compress(DECISION, emitted(stdout="y" * 1000))
    assert out.summary == "Measure the movement. Output: " + "y" * 300


def test_compress_reports_a_failed_execution() -> None:
    value = "'country'" + "z" * 500
    result = ExecResult(ok=False, stdout="partial", error=ExecError(name="KeyError", value=value))
    out = c.compress(DECISION, result)
    assert out.error and out.results == [] and out.updates == []
    assert out.summary == "Tried: Measure the movement. The code failed with KeyError: " + value[:200] + "."
