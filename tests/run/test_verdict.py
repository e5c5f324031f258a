"""Root causes, confidence and the conclusion sentence, from hand-made typed evidence."""

from __future__ import annotations

from datetime import date

import pytest

from investigator.analysis.causes import RootCause
from investigator.analysis.movement import Movement
from investigator.analysis.quality import QualityIssue, QualityReport
from investigator.analysis.ratio import DimensionSplit, RatioDecomposition
from investigator.analysis.seasonality import Seasonality
from investigator.analysis.segments import (
    BroadBased,
    Departure,
    DimensionSpread,
    DrillDown,
    FairShare,
    Segment,
    SegmentExplanation,
    SegmentMove,
)
from investigator.fmt import seg
from investigator.run.evidence import Evidence
from investigator.run.verdict import conclusion_text, confidence, root_causes

from ..analysis.helpers import spec

SUM = spec()  # revenue, dimensions country and platform
RATIO = spec(num="orders", den="sessions", dims=["country", "channel"])
JP = {"country": "JP"}
DE = {"country": "DE"}
JP_IOS = {"country": "JP", "platform": "ios"}
WEB = {"platform": "web"}


def move(z: float | None = -6.0, significant: bool = True, change_pct: float = -0.2) -> Movement:
    return Movement(
        metric="revenue",
        current=1000 * (1 + change_pct),
        baseline=1000.0,
        change=1000 * change_pct,
        change_pct=change_pct,
        z=z,
        history_points=20 if z is not None else 2,
        history_median_pct=0.0 if z is not None else None,
        history_spread_pct=0.03 if z is not None else None,
        significant=significant,
        comparable_windows=20.0 if z is not None else 2.0,
        short_history=z is None,
        strong=z is not None and abs(z) >= 3,
    )


def el(segment: dict[str, str], change: float, share: float, baseline: float = 1000.0) -> Segment:
    return Segment(segment=segment, baseline=baseline, current=baseline + change, change=change, share=share)


def segs(
    elements: list[Segment] | None = None,
    broad: bool = False,
    leaders: list[Segment] | None = None,
    departing: list[dict[str, str]] | None = None,
) -> SegmentExplanation:
    """`departing`: the segments that departed from their fair share (None: no dimension measured)."""
    dims = []
    if departing is not None:
        for dim in ("country", "platform"):
            gone = [
                FairShare(segment=d, change=-1.0, fair=0.0, excess=-1.0, share=0.5, pct=None, rest_pct=None)
                for d in departing
                if dim in d
            ]
            spread = DimensionSpread(dimension=dim, dispersion=1.0, min_pct=-0.3, max_pct=0.1, departing=gone)
            dims.append(spread)
    return SegmentExplanation(
        metric="revenue",
        total_change=-200.0,
        change_pct=-0.2,
        elements=elements or [],
        broad=BroadBased(metric="revenue", change_pct=-0.2, dimensions=dims, broad=broad),
        leaders=leaders or [],
    )


def issue(share: float, segment: dict[str, str] | None = None, detail: str = "missing_data") -> QualityIssue:
    return QualityIssue(
        detail=detail,
        segment=segment or {},
        effect=-200.0 * share,
        share=share,
        evidence=f"{detail} worth {share:.0%}",
    )


def quality(*issues: QualityIssue) -> QualityReport:
    return QualityReport(metric="revenue", numerator_change=-200.0, issues=list(issues))


def season(seasonal: bool = True, now: float = -0.2, then: float = -0.16) -> Seasonality:
    return Seasonality(
        metric="revenue",
        change_pct=now,
        comparisons=[],
        best_lag_days=364,
        best_change_pct=then,
        seasonal=seasonal,
        available=True,
    )


def drill(segment: dict[str, str], concentrated_in: dict[str, str] | None = None) -> DrillDown:
    return DrillDown(
        metric="revenue",
        segment=segment,
        segment_change=-150.0,
        segment_change_pct=-0.5,
        share_of_total=0.75,
        uniform=not concentrated_in,
        concentrated_in=concentrated_in or {},
    )


def split(dimension: str, mix: float, rate: float, weight_change: float = -0.12) -> DimensionSplit:
    return DimensionSplit(
        dimension=dimension,
        mix=mix,
        rate=rate,
        top_mix_segment="paid",
        top_mix=mix,
        top_mix_weight_change=weight_change,
        top_rate_segment="paid",
        top_rate=rate,
        rate_concentration=0.9,
        mix_concentration=0.9,
    )


def ratio(driver: str, share: float = 0.8, weight_change: float = -0.12) -> RatioDecomposition:
    return RatioDecomposition(
        metric="orders/sessions",
        baseline=0.05,
        current=0.04,
        change=-0.01,
        dimensions=[split("country", -0.001, -0.009), split("channel", -0.008, -0.002, weight_change)],
        driver=driver,
        dimension="channel",
        segment="paid",
        driver_share=share,
    )


def kinds(causes: list[RootCause]) -> list[str]:
    return [c.kind for c in causes]


# root causes --------------------------------------------------------------------------------------


def test_causes_are_ordered_data_quality_seasonality_segments_broad_based() -> None:
    ev = Evidence(
        movement=move(),
        quality=quality(issue(0.3)),
        seasonality=season(),
        segments=segs([el(JP, -150, 0.75)], broad=True),
    )
    causes = root_causes(ev, SUM)
    # broad-based is no separate cause when the season explains the move (it moved everything alike)
    assert kinds(causes) == ["data_quality", "seasonality", "segment_change"]
    assert causes[1].contribution == pytest.approx(0.8)  # -16% then / -20% now
    without_season = root_causes(ev.model_copy(update={"seasonality": None}), SUM)
    assert kinds(without_season) == ["data_quality", "segment_change", "broad_based"]
    assert without_season[2].contribution == 1.0


def test_ratio_causes_are_ordered_data_quality_seasonality_mix() -> None:
    ev = Evidence(movement=move(), quality=quality(issue(0.4)), seasonality=season(), ratio=ratio("mix"))
    assert kinds(root_causes(ev, RATIO)) == ["data_quality", "seasonality", "mix_shift"]


def test_a_whole_metric_issue_explained_by_a_segment_issue_is_not_listed() -> None:
    """A country's missing last day makes the whole last day look late: one problem, listed once."""
    day = [date(2026, 3, 29)]
    missing = issue(0.126, JP).model_copy(update={"effect": -99.0, "days": day})
    late = issue(0.132, None, "incomplete_recent_data").model_copy(update={"effect": -104.0, "days": day})
    causes = root_causes(Evidence(movement=move(), quality=quality(late, missing)), SUM)
    assert [(c.kind, c.detail, c.segment) for c in causes] == [("data_quality", "missing_data", JP)]


@pytest.mark.parametrize(
    ("detail", "share", "listed"),
    [
        ("incomplete_recent_data", 0.25, True),
        ("incomplete_recent_data", -0.3, False),  # it pushed the metric the other way
        ("incomplete_recent_data", 0.24, False),
        ("duplicates", 0.1, True),  # certain problems count from a tenth of the change
        ("missing_data", 0.12, True),
        ("missing_data", -0.12, False),  # rows missing while the metric rose cannot explain the rise
        ("duplicates", 0.09, False),
    ],
)
def test_a_data_quality_issue_is_a_cause_only_when_material(detail: str, share: float, listed: bool) -> None:
    ev = Evidence(movement=move(), quality=quality(issue(share, DE, detail)))
    causes = root_causes(ev, SUM)
    dq = [c for c in causes if c.kind == "data_quality"]
    assert bool(dq) is listed
    if listed:
        assert dq[0].contribution == pytest.approx(share)
        assert dq[0].change == pytest.approx(-200 * share)
        assert dq[0].detail == detail and dq[0].segment == DE


def test_a_data_quality_issue_on_a_segment_suppresses_the_segments_it_overlaps() -> None:
    ev = Evidence(
        movement=move(),
        quality=quality(issue(0.4, JP)),
        segments=segs([el(JP_IOS, -100, 0.5), el(DE, -60, 0.3), el(WEB, -50, 0.25)]),
    )
    causes = root_causes(ev, SUM)
    assert [(c.kind, c.segment) for c in causes] == [
        ("data_quality", JP),
        ("segment_change", DE),  # JP & ios lies inside the data problem; web only crosses it
        ("segment_change", WEB),
    ]


@pytest.mark.parametrize(("share", "suppressed"), [(0.7, True), (0.9, True), (0.6, False)])
def test_a_dominating_whole_metric_data_problem_suppresses_segments_and_broad_based(
    share: float, suppressed: bool
) -> None:
    ev = Evidence(movement=move(), quality=quality(issue(share)), segments=segs([el(JP, -150, 0.75)], True))
    got = kinds(root_causes(ev, SUM))
    if suppressed:
        assert got == ["data_quality"]
    else:
        assert got == ["data_quality", "segment_change", "broad_based"]


def test_two_whole_metric_issues_add_up_to_dominate() -> None:
    issues = quality(issue(0.4), issue(0.35, detail="duplicates"))
    ev = Evidence(movement=move(), quality=issues, segments=segs([el(JP, -150, 0.75)]))
    assert kinds(root_causes(ev, SUM)) == ["data_quality", "data_quality"]


def test_a_concentrated_drill_down_narrows_the_cause_to_where_it_is_held() -> None:
    ev = Evidence(movement=move(), segments=segs([el(JP, -150, 0.75)]), drills=[drill(JP, JP_IOS)])
    (cause,) = root_causes(ev, SUM)
    assert cause.kind == "segment_change" and cause.segment == JP_IOS
    assert cause.contribution == 0.75 and cause.change == -150


def test_a_uniform_drill_down_keeps_the_segment() -> None:
    ev = Evidence(movement=move(), segments=segs([el(JP, -150, 0.75)]), drills=[drill(JP)])
    assert [c.segment for c in root_causes(ev, SUM)] == [JP]


def test_a_drill_down_of_another_segment_does_not_narrow() -> None:
    ev = Evidence(movement=move(), segments=segs([el(JP, -150, 0.75)]), drills=[drill(DE, {**DE, "x": "y"})])
    assert [c.segment for c in root_causes(ev, SUM)] == [JP]


def test_a_narrowed_segment_is_not_listed_twice() -> None:
    elements = [el(JP, -150, 0.75), el(JP_IOS, -120, 0.6), el(DE, -40, 0.2)]
    ev = Evidence(movement=move(), segments=segs(elements), drills=[drill(JP, JP_IOS)])
    assert [c.segment for c in root_causes(ev, SUM)] == [JP_IOS, DE]


def test_segments_too_small_against_the_total_or_the_leader_are_not_causes() -> None:
    # share under a tenth; then a share over a tenth but a change under a tenth of the leader's
    elements = [el(JP, -300, 1.5), el(DE, -15, 0.075), el({"country": "US"}, -25, 0.125), el(WEB, 40, -0.2)]
    ev = Evidence(movement=move(), segments=segs(elements))
    causes = root_causes(ev, SUM)
    assert [c.segment for c in causes] == [JP, WEB]  # a mover against the total counts too
    assert causes[0].evidence == "country=JP: 1,000 -> 700, 150% of the change"


def test_a_mix_driven_ratio_is_a_mix_shift_and_no_rate_cause() -> None:
    ev = Evidence(movement=move(), ratio=ratio("mix", 0.8), segments=segs([el(JP, -0.004, 0.4)]))
    (cause,) = root_causes(ev, RATIO)
    assert cause.kind == "mix_shift" and cause.segment == {"channel": "paid"}
    assert cause.contribution == 0.8 and cause.change == pytest.approx(-0.008)
    assert (
        cause.evidence
        == "channel=paid share of sessions moved -12.0%; its part of the mix is -0.008 of the -0.01 change "
        "(channel's whole mix: -0.008)"
    )


def test_a_rate_driver_without_localized_segments_is_a_rate_change() -> None:
    ev = Evidence(movement=move(), ratio=ratio("rate", 0.6543), segments=segs([]))
    (cause,) = root_causes(ev, RATIO)
    assert cause.kind == "rate_change" and cause.segment == {"channel": "paid"}
    assert cause.contribution == 0.654
    assert cause.evidence == "the ratio moved inside channel=paid"


def test_a_rate_driver_with_localized_segments_lists_the_segments_as_rate_changes() -> None:
    ev = Evidence(movement=move(), ratio=ratio("rate", 0.6), segments=segs([el(JP, -0.006, 0.6)]))
    causes = root_causes(ev, RATIO)
    assert [(c.kind, c.segment) for c in causes] == [("rate_change", JP)]


def test_elements_of_a_sum_metric_are_segment_changes() -> None:
    ev = Evidence(movement=move(), segments=segs([el(JP, -150, 0.75)]))
    assert kinds(root_causes(ev, SUM)) == ["segment_change"]


def test_an_insignificant_movement_is_no_change_and_drops_mix_and_seasonality() -> None:
    ev = Evidence(movement=move(z=1.23, significant=False, change_pct=-0.01), seasonality=season(),
                  ratio=ratio("mix"))  # fmt: skip
    (cause,) = root_causes(ev, RATIO)
    assert cause.kind == "no_change" and cause.contribution is None
    assert cause.evidence == "-1.0% is within normal variation (z=+1.2)"


def test_a_small_move_without_history_is_not_called_normal_variation() -> None:
    ev = Evidence(movement=move(z=None, significant=False, change_pct=0.02))
    (cause,) = root_causes(ev, SUM)
    assert cause.kind == "no_change"
    assert cause.evidence == (
        "+2.0%: only 2 comparable earlier windows, too few to tell it from normal variation, and no segment, "
        "mix or rate explains it"
    )


def test_an_insignificant_movement_drops_broad_based() -> None:
    ev = Evidence(movement=move(z=1.0, significant=False), segments=segs([], broad=True))
    assert kinds(root_causes(ev, SUM)) == ["no_change"]


def test_without_history_the_largest_movers_are_named_with_a_caveat() -> None:
    leaders = [el(DE, -300, 1.5), el(JP, 100, -0.5), el(WEB, -90, 0.45)]
    ev = Evidence(movement=move(z=None), segments=segs([], leaders=leaders, departing=[DE, JP, WEB]))
    causes = root_causes(ev, SUM)
    assert [(c.segment, c.contribution) for c in causes] == [(DE, 1.5), (JP, -0.5)]  # largest, and against
    assert all("too few to tell it from normal variation" in c.evidence for c in causes)
    assert confidence(causes, ev) == "low"


def test_without_history_a_leader_that_moved_at_the_rests_rate_is_not_named() -> None:
    """Its size made its share: the largest of segments that all fell alike is no cause."""
    leaders = [el(DE, -300, 0.6), el(JP, -100, 0.2)]
    ev = Evidence(movement=move(z=None), segments=segs([], leaders=leaders, departing=[]))
    assert root_causes(ev, SUM) == []


def test_with_history_a_leader_moving_in_proportion_to_its_size_is_no_cause() -> None:
    ev = Evidence(movement=move(z=-6.0), segments=segs([], leaders=[el(DE, -170, 0.85, baseline=800)]))
    assert root_causes(ev, SUM) == []  # 80% of the baseline, 85% of the change: nothing stands out


def test_with_history_a_disproportionate_leader_is_named_when_localization_is_silent() -> None:
    ev = Evidence(movement=move(z=-6.0), segments=segs([], leaders=[el(DE, -180, 0.9, baseline=500)]))
    (cause,) = root_causes(ev, SUM)
    assert cause.segment == DE and cause.contribution == pytest.approx(0.9)
    assert "50% of the baseline, 90% of the change" in cause.evidence
    quiet = Evidence(movement=move(z=-1.0, significant=False), segments=ev.segments)
    assert kinds(root_causes(quiet, SUM)) == ["no_change"]  # within normal variation: nobody is named


@pytest.mark.parametrize("dq", [issue(0.5, JP), issue(0.9)], ids=["on_segment", "dominating_whole"])
def test_without_history_a_data_problem_still_suppresses_the_leaders(dq: QualityIssue) -> None:
    ev = Evidence(
        movement=move(z=None),
        quality=quality(dq),
        segments=segs([el(JP, -180, 0.9)], leaders=[el(JP, -180, 0.9)]),
    )
    assert kinds(root_causes(ev, SUM)) == ["data_quality"]


def test_a_narrowed_cause_does_not_quote_the_parent_segment_numbers_as_its_own() -> None:
    ev = Evidence(movement=move(), segments=segs([el(JP, -150, 0.75)]), drills=[drill(JP, JP_IOS)])
    (cause,) = root_causes(ev, SUM)
    assert f"{seg(JP_IOS)}: 1,000 -> 850" not in cause.evidence


# confidence ---------------------------------------------------------------------------------------


def cause(kind: str, contribution: float | None) -> RootCause:
    return RootCause(kind=kind, segment=JP if kind.endswith("_change") else {}, contribution=contribution)


@pytest.mark.parametrize(
    ("contributions", "level"),
    [
        ([0.6], "high"),
        ([-0.6], "high"),
        ([0.59], "medium"),
        ([0.5, 0.3], "high"),  # the total reaches 0.8
        ([0.5, 0.29], "medium"),
        ([0.3], "medium"),
        ([0.29], "low"),
        ([0.29, 0.29, 0.29], "high"),  # a low top share but the causes together explain enough
    ],
)
def test_confidence_follows_the_top_share_and_the_total(contributions: list[float], level: str) -> None:
    causes = [cause("segment_change", c) for c in contributions]
    assert confidence(causes, Evidence(movement=move())) == level


def test_broad_based_counts_as_the_whole_change_on_top_but_not_in_the_total() -> None:
    ev = Evidence(movement=move())
    assert confidence([cause("broad_based", 1.0)], ev) == "high"
    assert confidence([cause("segment_change", 0.5), cause("broad_based", 1.0)], ev) == "medium"
    assert confidence([cause("seasonality", 0.1)], ev) == "high"


def test_confidence_is_low_without_causes_or_without_history() -> None:
    assert confidence([], Evidence(movement=move())) == "low"
    assert confidence([cause("segment_change", 1.5)], Evidence(movement=move(z=None))) == "low"


def test_a_short_history_fully_explained_by_one_segment_is_medium() -> None:
    """Too little history to score the move, but one segment carries all of it: said as such."""
    assert confidence([cause("segment_change", 0.9)], Evidence(movement=move(z=None))) == "medium"
    assert confidence([cause("segment_change", 0.5)], Evidence(movement=move(z=None))) == "low"


def test_a_high_confidence_drops_to_medium_when_the_total_is_within_normal_variation() -> None:
    ev = Evidence(movement=move(z=2.5, significant=False))
    assert confidence([cause("data_quality", 0.9)], ev) == "medium"
    assert confidence([cause("data_quality", 0.2)], ev) == "low"


@pytest.mark.parametrize(("z", "level"), [(1.9, "high"), (-1.5, "high"), (2.0, "medium"), (None, "low")])
def test_no_change_confidence_depends_on_how_ordinary_the_move_is(z: float | None, level: str) -> None:
    ev = Evidence(movement=move(z=z, significant=False))
    assert confidence([cause("no_change", None)], ev) == level


# conclusion ---------------------------------------------------------------------------------------

HEAD = "revenue went from 1,000 to 800 (-20.0%) in 2026-03-23..2026-03-29 vs 2026-03-16..2026-03-22."


def test_conclusion_without_causes_says_none_could_be_established() -> None:
    text = conclusion_text([], Evidence(movement=move()), SUM)
    assert text == HEAD + " No root cause could be established from the evidence gathered."


def test_conclusion_without_a_movement_shows_na() -> None:
    text = conclusion_text([], Evidence(), SUM)
    assert text.startswith("revenue went from n/a to n/a (n/a) in 2026-03-23..2026-03-29")


def test_conclusion_for_no_change_gives_the_z_score() -> None:
    ev = Evidence(movement=move(z=1.26, significant=False, change_pct=-0.01))
    causes = root_causes(ev, SUM)
    assert conclusion_text(causes, ev, SUM) == (
        "revenue went from 1,000 to 990 (-1.0%) in 2026-03-23..2026-03-29 vs 2026-03-16..2026-03-22. "
        "That is within normal variation (z=+1.3 against recent earlier windows): "
        "there is no root cause to find."
    )
    ev = Evidence(movement=move(z=None, significant=False, change_pct=-0.01))
    assert conclusion_text(root_causes(ev, SUM), ev, SUM).endswith(  # never "normal" on a short history
        "There are only 2 comparable earlier windows, too few to tell it from normal variation, and no "
        "segment, mix or rate explains it."
    )


def test_conclusion_names_the_first_three_causes_with_their_shares() -> None:
    causes = [
        RootCause(kind="data_quality", segment=JP, detail="missing_data", contribution=0.4),
        RootCause(kind="seasonality", contribution=0.5),
        RootCause(kind="segment_change", segment=DE, contribution=-0.35),
        RootCause(kind="broad_based", contribution=1.0),
    ]
    assert conclusion_text(causes, Evidence(movement=move()), SUM) == HEAD + (
        " Explained by a data problem (missing_data, country=JP) (40% of the change); seasonality "
        "(50% of the change); country=DE (moved against the "
        "total: 35% of the change, the other way)."
    )


def test_conclusion_leaves_out_the_share_of_broad_based_and_of_causes_without_one() -> None:
    causes = [
        RootCause(kind="mix_shift", segment={"channel": "paid"}, contribution=0.8),
        RootCause(kind="rate_change", segment=JP, contribution=None),
        RootCause(kind="broad_based", contribution=1.0),
    ]
    assert conclusion_text(causes, Evidence(movement=move()), SUM) == HEAD + (
        " Explained by a mix shift away from channel=paid (80% of the change); the rate changing inside "
        "country=JP; a broad-based move across all segments."
    )


def test_a_mix_shift_towards_a_segment_is_not_worded_away_from_it() -> None:
    ev = Evidence(movement=move(), ratio=ratio("mix", 0.8, weight_change=+0.15))
    causes = root_causes(ev, RATIO)
    assert "+15.0%" in causes[0].evidence  # the segment's share of sessions grew
    assert "away from channel=paid" not in conclusion_text(causes, ev, RATIO)


def mover(segment: dict[str, str], change: float, z: float) -> SegmentMove:
    return SegmentMove(segment=segment, current=1000 + change, baseline=1000.0, change=change,
                       change_pct=change / 1000, z=z)  # fmt: skip


JP_DEPARTED = Departure(segment=JP, pct=-0.3, rest_pct=0.0, share=1.5, z=-5.0)  # far beyond its own history


def test_a_segment_far_outside_its_own_history_that_offsets_a_cause_is_listed() -> None:
    found = segs([el(JP, -300, 1.5)]).model_copy(
        update={"movers": [mover(WEB, +250, 6.0)], "departures": [JP_DEPARTED]}
    )
    ev = Evidence(movement=move(z=-0.5, significant=False, change_pct=-0.05), segments=found)
    assert [c.segment for c in root_causes(ev, SUM)] == [JP, WEB]


@pytest.mark.parametrize(
    ("movers", "why"),
    [
        ([mover(WEB, -250, 6.0)], "moved the same way as the cause"),
        ([mover(DE, +250, 6.0)], "in the dimension localization already split"),
        ([mover(WEB, +20, 6.0)], "too small next to the cause"),
    ],
)
def test_no_other_segment_is_listed_as_offsetting(movers: list[SegmentMove], why: str) -> None:
    found = segs([el(JP, -300, 1.5)]).model_copy(update={"movers": movers, "departures": [JP_DEPARTED]})
    ev = Evidence(movement=move(z=-0.5, significant=False, change_pct=-0.05), segments=found)
    assert [c.segment for c in root_causes(ev, SUM)] == [JP], why


def test_within_normal_variation_a_localized_segment_that_did_not_outrun_its_history_is_no_cause() -> None:
    """The total barely moved and JP's fall is ordinary for JP: 150% of a small net change is an
    offsetting move inside the data, not why the total moved."""
    slow = JP_DEPARTED.model_copy(update={"z": -1.0})
    found = segs([el(JP, -300, 1.5)]).model_copy(update={"departures": [slow]})
    ev = Evidence(movement=move(z=-0.5, significant=False, change_pct=-0.05), segments=found)
    assert kinds(root_causes(ev, SUM)) == ["no_change"]


def test_movers_are_not_read_when_the_total_moved() -> None:
    found = segs([el(JP, -300, 1.5)]).model_copy(update={"movers": [mover(WEB, +250, 6.0)]})
    assert [c.segment for c in root_causes(Evidence(movement=move(), segments=found), SUM)] == [JP]
