"""Hypotheses: what could explain the movement, and where the evidence stands on each."""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel

from investigator.analysis.causes import CauseKind, RootCause
from investigator.analysis.spec import AnalysisSpec

HypothesisKind = Literal["data_quality", "seasonality", "segments", "mix", "rate", "broad_based"]
CONFIRMS: dict[CauseKind, HypothesisKind] = {  # the hypothesis each kind of cause stands for
    "segment_change": "segments",
    "rate_change": "rate",
    "mix_shift": "mix",
    "data_quality": "data_quality",
    "seasonality": "seasonality",
    "broad_based": "broad_based",
}


class Status(StrEnum):
    PENDING = "PENDING"
    INVESTIGATING = "INVESTIGATING"
    CONFIRMED = "CONFIRMED"
    RULED_OUT = "RULED_OUT"
    NOT_TESTABLE = "NOT_TESTABLE"  # the data cannot test it (no comparable period, too little history)


class Hypothesis(BaseModel):
    id: str
    statement: str
    kind: HypothesisKind  # which analysis tests it
    status: Status = Status.PENDING
    evidence: str = ""

    @property
    def open(self) -> bool:
        return self.status in (Status.PENDING, Status.INVESTIGATING)


def seed_hypotheses(spec: AnalysisSpec) -> list[Hypothesis]:
    """The standard candidate explanations, generated from the metric and its dimensions."""
    dims = ", ".join(spec.dimensions) or "(no dimensions)"
    items: list[tuple[HypothesisKind, str]] = [
        (
            "data_quality",
            "The movement is a data artefact: missing partitions, duplicated rows or incomplete recent days.",
        ),
        ("seasonality", f"The movement is seasonal: {_season_words(spec)} moved alike."),
    ]
    if not spec.dimensions:  # a single series: nothing to localize or to call broad
        pass
    elif spec.is_ratio:
        items += [
            (
                "mix",
                f"The ratio moved because the {spec.denominator} mix shifted between segments "
                f"of one dimension ({dims}) while each segment's ratio held.",
            ),
            ("rate", f"The ratio moved inside specific segments ({dims})."),
        ]
    else:
        items.append(
            ("segments", f"The change is concentrated in a few segments of {dims} (any combination).")
        )
    if spec.dimensions:
        items.append(("broad_based", "Every segment moved alike: the change is broad-based."))
    return [Hypothesis(id=f"H{i}", statement=s, kind=k) for i, (k, s) in enumerate(items, 1)]


def _season_words(spec: AnalysisSpec) -> str:
    """What the seasonality check compares, so the table says what was tested."""
    if spec.window_grain.unit == "day":
        short = spec.current.days < 7 and spec.baseline_offset != 7
        return "the same days a week and a year earlier" if short else "the same days a year earlier"
    return "the same periods in earlier years"


def with_status(
    hypotheses: list[Hypothesis], hid: str | None, status: Status, evidence: str = ""
) -> list[Hypothesis]:
    """A new list with one hypothesis updated; unknown ids leave the list as it was."""
    return [
        h.model_copy(update={"status": status, "evidence": evidence or h.evidence}) if h.id == hid else h
        for h in hypotheses
    ]


def confirmed_by(hypotheses: list[Hypothesis], causes: list[RootCause]) -> list[Hypothesis]:
    """The table as the conclusion reads it: a hypothesis that a concluded cause stands for is
    CONFIRMED by that cause, whatever one analysis said of it before. The verdict weighs the
    analyses together (a segment localization did not single out can still carry a move far
    beyond its size), and a table that rules out what the headline names misleads."""
    out = []
    for h in hypotheses:
        cause = next((c for c in causes if CONFIRMS.get(c.kind) == h.kind), None)
        if cause is None and h.status == Status.CONFIRMED and causes:
            # the conclusion does not rest on it: a table that confirms what the headline leaves
            # out (a season under "within normal variation", a data problem that pushed the
            # metric the other way) tells a second story
            why = (
                causes[0].evidence if causes[0].kind == "no_change" else "the conclusion does not rest on it"
            )
            evidence = f"not a cause: {why}" + (f" (tested: {h.evidence})" if h.evidence else "")
            out.append(h.model_copy(update={"status": Status.RULED_OUT, "evidence": evidence}))
        elif cause is None or h.status == Status.CONFIRMED:
            out.append(h)
        else:
            evidence = f"concluded: {cause.evidence}"
            out.append(h.model_copy(update={"status": Status.CONFIRMED, "evidence": evidence}))
    return out


def next_pending(hypotheses: list[Hypothesis]) -> Hypothesis | None:
    return next((h for h in hypotheses if h.status == Status.PENDING), None)


def current(hypotheses: list[Hypothesis]) -> Hypothesis | None:
    return next((h for h in hypotheses if h.status == Status.INVESTIGATING), None)
