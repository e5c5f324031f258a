"""Issue 39, item 2: asking the demo question four times listed the same headline three times
under "Previously found" beside one run's cause. Identical past answers are one line, with how
many runs gave them and when; different answers stay apart, in recall's order."""

from __future__ import annotations

from datetime import UTC, datetime

from investigator.memory.models import Recalled
from investigator.report.recalled import previously_found

HEADLINE = "revenue fell 12% (a data problem: 2026-03-29 is missing for every segment)"
CAUSE = "segment platform=ios: -30% on orders"


def _memory(run_id: str, text: str, score: float, day: int | None) -> Recalled:
    created = datetime(2026, 3, day, 9, tzinfo=UTC) if day else None
    return Recalled(run_id=run_id, text=text, score=score, created=created)


def test_identical_answers_are_one_line_with_their_runs_and_days() -> None:
    recalled = [
        _memory("20260327-090000-aaaaaa", HEADLINE, 0.91, 27),
        _memory("20260329-090000-cccccc", HEADLINE, 0.95, 29),
        _memory("20260328-090000-bbbbbb", CAUSE, 0.80, 28),
        _memory("20260328-090000-bbbbbb", " ".join(HEADLINE.split(" ")), 0.90, None),  # its day from its id
    ]
    found = previously_found(recalled)
    assert [a.text for a in found] == [HEADLINE, CAUSE]
    headline, cause = found
    assert headline.runs == ["20260329-090000-cccccc", "20260328-090000-bbbbbb", "20260327-090000-aaaaaa"]
    assert headline.score == 0.95
    assert headline.when() == "3 runs, 2026-03-27 to 2026-03-29 (latest 20260329-090000-cccccc)"
    assert cause.when() == "run 20260328-090000-bbbbbb, 2026-03-28"
