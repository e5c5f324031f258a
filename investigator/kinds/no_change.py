"""No change: nothing found, and the move is within normal variation; on a history too short to
score it, nothing in the breakdown explains it (said as such, never "small"). It comes last: it is
what is left."""

from __future__ import annotations

import math

from investigator.analysis.causes import RootCause
from investigator.analysis.movement import movement
from investigator.fmt import pct
from investigator.kinds.base import Case, CheckData, Checked, Kind
from investigator.kinds.common import noise, too_short
from investigator.run.evidence import Evidence


def _decide(case: Case) -> list[RootCause]:
    move = case.evidence.movement
    if case.accepted or case.evidence.significant:
        return []
    if move is not None and move.short_history:
        text = (
            f"{pct(move.change_pct)}: {too_short(move)} to tell it from normal variation, and no segment, "
            "mix or rate explains it"
        )
        return [RootCause(kind="no_change", contribution=None, evidence=text)]
    z = move.z if move is not None else None
    text = f"{pct(move.change_pct if move else None)} is within normal variation" + (
        f" (z={z:+.1f})" if z is not None else ""
    )
    return [RootCause(kind="no_change", contribution=None, evidence=text)]


CARRIES = 0.4  # a segment that carries this share of the change ...
DOUBLED = 2.0  # ... and doubled (or halved) leaves "no root cause to find" in doubt


def doubtful(evidence: Evidence) -> bool:
    """Within normal variation, yet one segment carries much of the move and doubled (or halved):
    "no root cause to find" may be said, but not at high confidence."""
    segments = evidence.segments
    for s in segments.leaders if segments is not None else []:
        if abs(s.share) < CARRIES or s.baseline <= 0 or s.current < 0 or noise(evidence, s):
            continue
        if s.current >= DOUBLED * s.baseline or s.current * DOUBLED <= s.baseline:
            return True
    return False


def _check(d: CheckData, c: RootCause) -> Checked:
    m = movement(d.daily, d.spec)
    within = m.significant is False and (m.z is None or math.isfinite(m.z))
    return Checked(None if within else "the movement is outside normal variation")


KIND = Kind(
    name="no_change",
    causes=("no_change",),
    decide=_decide,
    owns=lambda c, spec: c.kind == "no_change",
    words=lambda c, e: "nothing: the movement is within normal variation",
    check=_check,
)
