"""From structured evidence to root causes, a confidence and a sentence a person can repeat.

The offline planner concludes with this, and the loop uses it for a partial conclusion when a run
stops early, so both say the same thing for the same evidence. The causes come from the kinds
(`investigator.kinds.root_causes`), the words from `verdict_words`.
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.kinds import no_change
from investigator.kinds import root_causes as root_causes
from investigator.kinds.data_quality import relabel_note as relabel_note
from investigator.run.decision import Confidence
from investigator.run.evidence import Evidence
from investigator.run.late_facts import late_fact as late_fact
from investigator.run.late_facts import with_facts as with_facts
from investigator.run.verdict_words import conclusion_text as conclusion_text
from investigator.run.verdict_words import span as span

FULLY = (0.8, 1.2)  # one cause that explains about all of the change


def confidence(causes: list[RootCause], evidence: Evidence) -> Confidence:
    """How sure the conclusion is: high only for a move far outside normal variation that the
    causes explain; a move merely unusual, or one the history is too short to judge, is at most
    medium, and medium on a short history only when the analysis explained it all."""
    if not causes:
        return "low"
    top = causes[0]
    move = evidence.movement
    z = move.z if move is not None else None
    if top.kind == "no_change":
        if move is not None and move.short_history:
            return "low"
        sure = z is not None and abs(z) < 2 and not no_change.doubtful(evidence)
        return "high" if sure else "medium"
    share = abs(top.contribution or 0) if top.kind not in ("broad_based", "seasonality") else 1.0
    # a driver is a second axis of the same change: its share does not add to the segments'
    total = sum(abs(c.contribution or 0) for c in causes if c.kind not in ("broad_based", "driver_change"))
    level: Confidence = "high" if share >= 0.6 or total >= 0.8 else "medium" if share >= 0.3 else "low"
    if move is None or move.short_history or z is None:
        named = bool(top.segment) or top.kind in ("data_quality", "mix_shift")
        return "medium" if named and FULLY[0] <= share <= FULLY[1] else "low"
    if level == "high" and not move.strong:
        return "medium"  # unusual, but not far outside normal variation
    return level
