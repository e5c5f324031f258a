"""Compress a step's output into a 2-3 sentence finding, plus the hypothesis updates it implies.

Structured results (published with `emit`, parsed once in `evidence.py`) are read by the kinds of
cause (`investigator.kinds.read`); the movement, which every kind reads, is summarised here;
anything else is cut to its first lines. The full output goes to disk, never into the context.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from investigator import kinds
from investigator.analysis.movement import Movement
from investigator.fmt import num, pct
from investigator.run.decision import Decision
from investigator.run.evidence import AnalysisResult, parse_results
from investigator.run.hypotheses import Update
from sandbox.models import ExecResult


class Compressed(BaseModel):
    summary: str
    updates: list[Update] = Field(default_factory=list)
    results: list[AnalysisResult] = Field(default_factory=list)  # the step's typed results
    error: bool = False


Summary = tuple[str, list[Update]]


def compress(decision: Decision, result: ExecResult) -> Compressed:
    if not result.ok and result.error is not None:
        tried = decision.rationale.split(".")[0]
        return Compressed(
            summary=f"Tried: {tried}. The code failed with {result.error.name}: {result.error.value[:200]}.",
            error=True,
        )
    results = parse_results(result)
    parts, updates = [], []
    for r in results:
        summary = summarise(r)
        if summary is not None:
            parts.append(summary[0])
            updates += summary[1]
    if not parts:
        first = " ".join(result.text().split())[:300]
        parts.append(f"{decision.rationale.split('.')[0]}. Output: {first or '(nothing printed)'}")
    return Compressed(summary=" ".join(parts), updates=updates, results=results)


def summarise(r: AnalysisResult) -> Summary | None:
    """A finding and its hypothesis updates for one result, as the kinds read it; None for results
    that are not findings (BroadBased alone, Verification: read by the loop)."""
    if isinstance(r, Movement):
        return movement(r)
    reading = kinds.read(r)
    if reading is None:
        return None
    return reading.text or "", reading.updates


def movement(p: Movement) -> Summary:
    basis = (
        f"z={p.z:+.1f} against {p.history_points} earlier windows"
        if p.z is not None
        else "too little history for a z-score"
    )
    verdict = "outside normal variation" if p.significant else "within normal variation"
    return (
        f"Measured {p.metric}: {num(p.current)} vs baseline {num(p.baseline)} "
        f"({pct(p.change_pct)}), {basis}. The movement is {verdict}.",
        [],
    )
