"""Which causes an approved late-data fact explains: drops in its segment (or a part of it) only."""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.memory.models import ApprovedFact
from investigator.run.verdict import late_fact, with_facts

LATE = ApprovedFact(id="f-1", topic="revenue", text="affiliate is late", kind="late_data",
                    segment={"channel": "affiliate"}, lag_days=2)  # fmt: skip
NOTE = ApprovedFact(id="f-2", topic="revenue", text="affiliate is big", segment={"channel": "affiliate"})


def cause(change: float, **segment: str) -> RootCause:
    return RootCause(kind="segment_change", segment=segment, contribution=0.5, change=change, evidence="e")


def test_a_late_fact_explains_drops_in_its_segment_only() -> None:
    assert late_fact(cause(-10, channel="affiliate"), [LATE]) == LATE
    assert late_fact(cause(-10, channel="affiliate", country="DE"), [LATE]) == LATE  # a part of it
    assert late_fact(cause(+10, channel="affiliate"), [LATE]) is None  # late rows never raise a metric
    assert late_fact(cause(-10, channel="email"), [LATE]) is None
    assert late_fact(cause(-10, channel="affiliate"), [NOTE]) is None  # a note is context, not a rule


def test_explained_causes_lead_and_name_the_fact_with_their_numbers_unchanged() -> None:
    email, affiliate = cause(-20, channel="email"), cause(-10, channel="affiliate")
    out = with_facts([email, affiliate], [LATE])
    assert [c.segment for c in out] == [{"channel": "affiliate"}, {"channel": "email"}]
    assert out[0].evidence.startswith("known late data (approved fact f-1")
    assert (out[0].contribution, out[0].change) == (0.5, -10)
