"""No change: "no root cause to find" is never said at high confidence while one segment carries
40% of a rise and doubled."""

from __future__ import annotations

from investigator.kinds import root_causes
from investigator.run.evidence import Evidence
from investigator.run.verdict import confidence

from ..run.test_verdict import DE, JP, SUM, el, move, segs


def test_a_segment_that_doubled_and_carries_much_of_the_move_leaves_no_change_in_doubt() -> None:
    quiet = move(z=0.8, significant=False, change_pct=0.05)
    doubled = segs(leaders=[el(JP, 120.5, 0.45, baseline=110.25), el(DE, 60.5, 0.25, baseline=900.25)])
    ev = Evidence(movement=quiet, segments=doubled)
    causes = root_causes(ev, SUM)
    assert [c.kind for c in causes] == ["no_change"]
    assert confidence(causes, ev) == "medium"
    steady = segs(leaders=[el(JP, 40.5, 0.45, baseline=400.25), el(DE, 60.5, 0.25, baseline=900.25)])
    calm = ev.model_copy(update={"segments": steady})
    assert confidence(root_causes(calm, SUM), calm) == "high"
