"""Which causes an approved late-data fact explains: drops in its segment (or a part of it) only,
in a window that reaches the data's last days, up to what those days could hold."""

from __future__ import annotations

from datetime import date

from investigator.analysis.causes import RootCause
from investigator.analysis.segments import BroadBased, Segment, SegmentExplanation
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.memory.models import ApprovedFact
from investigator.run.evidence import Evidence
from investigator.run.late_facts import late_days
from investigator.run.verdict import late_fact, with_facts

LATE = ApprovedFact(id="f-1", topic="revenue", text="affiliate is late", kind="late_data",
                    segment={"channel": "affiliate"}, lag_days=2)  # fmt: skip
WHOLE = ApprovedFact(id="f-3", topic="revenue", text="revenue is late", kind="late_data", lag_days=2)
NOTE = ApprovedFact(id="f-2", topic="revenue", text="affiliate is big", segment={"channel": "affiliate"})


def spec(end: date = date(2026, 3, 29), last: date | None = date(2026, 3, 29)) -> AnalysisSpec:
    cur = Window(start=date.fromordinal(end.toordinal() - 6), end=end)
    return AnalysisSpec(metric="revenue", numerator="revenue", dimensions=["channel", "country"],
                        current=cur, baseline=cur.shifted(-7), data_last=last)  # fmt: skip


def evidence(**baselines: float) -> Evidence:
    rows = [
        Segment(segment={"channel": k}, current=0, baseline=v, change=0, share=0)
        for k, v in baselines.items()
    ]
    broad = BroadBased(metric="revenue", change_pct=None, dimensions=[], broad=False)
    return Evidence(
        segments=SegmentExplanation(
            metric="revenue", total_change=0, change_pct=None, elements=rows, broad=broad
        )
    )


def cause(change: float, **segment: str) -> RootCause:
    return RootCause(kind="segment_change", segment=segment, contribution=0.5, change=change, evidence="e")


def test_a_late_fact_explains_drops_in_its_segment_only() -> None:
    s = spec()
    assert late_fact(cause(-10, channel="affiliate"), [LATE], s) == LATE
    assert late_fact(cause(-10, channel="affiliate", country="DE"), [LATE], s) == LATE  # a part of it
    assert late_fact(cause(+10, channel="affiliate"), [LATE], s) is None  # late rows never raise a metric
    assert late_fact(cause(-10, channel="email"), [LATE], s) is None
    assert late_fact(cause(-10, channel="affiliate"), [NOTE], s) is None  # a note is context, not a rule
    assert late_fact(cause(-10, channel="affiliate"), [WHOLE], s) is None  # the whole metric's fact


def test_a_late_fact_holds_only_in_windows_that_reach_the_data_s_last_days() -> None:
    assert late_days(LATE, spec()) == 2
    assert late_days(LATE, spec(last=date(2026, 3, 30))) == 1
    old = spec(end=date(2026, 2, 15))  # six weeks before the data ends
    assert late_days(LATE, old) == 0 and late_fact(cause(-10, channel="affiliate"), [LATE], old) is None
    assert late_fact(cause(-10, channel="affiliate"), [LATE], spec(last=None)) is None  # end unknown


def test_explained_causes_lead_and_name_the_fact_with_their_numbers_unchanged() -> None:
    email, affiliate = cause(-20, channel="email"), cause(-10, channel="affiliate")
    out = with_facts([email, affiliate], [LATE], spec(), evidence(affiliate=70, email=100))
    assert [c.segment for c in out] == [{"channel": "affiliate"}, {"channel": "email"}]
    assert (out[0].kind, out[0].detail) == ("data_quality", "incomplete_recent_data")
    assert out[0].evidence.startswith("known late data (approved fact f-1")
    assert (out[0].contribution, out[0].change) == (0.5, -10)
    assert out[1] == email


def test_a_drop_beyond_what_the_late_days_hold_keeps_its_cause() -> None:
    """Two of seven days of a segment worth 70 hold at most 20: a drop of 30 is a real change."""
    (out,) = with_facts([cause(-30, channel="affiliate")], [LATE], spec(), evidence(affiliate=70))
    assert out.kind == "segment_change" and "up to 20.0 of it may be rows landing late" in out.evidence
