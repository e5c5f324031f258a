"""Broad-based: never a second story after a mix shift."""

from __future__ import annotations

from investigator.kinds import root_causes
from investigator.run.evidence import Evidence

from ..run.test_verdict import RATIO, move, ratio, segs


def test_a_mix_shift_is_not_followed_by_broad_based() -> None:
    """The denominator's mix moved while every segment's numerator moved alike: the ratio's move is
    the mix (its segments' ratios held), and "every segment moved alike" would tell a second story."""
    ev = Evidence(movement=move(), ratio=ratio("mix"), segments=segs(broad=True))
    causes = root_causes(ev, RATIO)
    assert [c.kind for c in causes] == ["mix_shift"]
    assert causes[0].segment == {"channel": "paid"}


def test_a_rate_move_that_every_segment_shares_is_still_broad_based() -> None:
    ev = Evidence(movement=move(), ratio=ratio("rate"), segments=segs(broad=True))
    assert [c.kind for c in root_causes(ev, RATIO)] == ["broad_based"]
