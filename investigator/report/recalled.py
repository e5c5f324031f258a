"""What a report shows of the memories a run recalled: one line per past answer. Asking the same
question four times recalled one headline three times beside one run's cause; identical answers
are now one line with how many runs gave it and when."""

from __future__ import annotations

from datetime import date, datetime

from pydantic import BaseModel

from investigator.memory.models import Recalled

__all__ = ["PastAnswer", "previously_found"]


class PastAnswer(BaseModel):
    """One answer past runs gave: its text, the runs that gave it (newest first), the best
    relevance among them and the days they ran."""

    text: str
    runs: list[str]
    score: float
    first: date | None = None
    last: date | None = None

    def when(self) -> str:
        """`run R` for one run; `3 runs, 2026-03-01 to 2026-03-29` for several."""
        if len(self.runs) == 1:
            return f"run {self.runs[0]}" + (f", {self.last}" if self.last else "")
        days = (
            ""
            if self.last is None
            else f", {self.first} to {self.last}"
            if self.first != self.last
            else f", {self.last}"
        )
        return f"{len(self.runs)} runs{days} (latest {self.runs[0]})"


def previously_found(recalled: list[Recalled]) -> list[PastAnswer]:
    """The recalled memories with identical text merged, in the order recall ranked them."""
    merged: dict[str, list[Recalled]] = {}
    for m in recalled:
        merged.setdefault(" ".join(m.text.split()), []).append(m)
    answers = []
    for text, same in merged.items():
        days = sorted(d for d in (_day(m) for m in same) if d is not None)
        runs = sorted(dict.fromkeys(m.run_id for m in same), reverse=True)
        answers.append(
            PastAnswer(
                text=text,
                runs=runs,
                score=max(m.score for m in same),
                first=days[0] if days else None,
                last=days[-1] if days else None,
            )
        )
    return answers


def _day(m: Recalled) -> date | None:
    """The day a memory's run was made: its time, else its id's (ids begin with the UTC time)."""
    if m.created is not None:
        return m.created.date()
    try:
        return datetime.strptime(m.run_id[:8], "%Y%m%d").date()
    except ValueError:
        return None
