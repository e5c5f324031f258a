"""The kinds of cause, one module each, listed once in precedence order.

Each module holds everything about its kind (`base.Kind`): its hypotheses and the kernel code that
tests them, how it reads a result, its cause rule, its words and its host check. Deciding the causes
is one loop over `KINDS`, each kind seeing the causes the kinds before it accepted. The planners,
the prompts, the compressor, the verifier and the verdict read the kinds from here.

To add a kind: see CONTRIBUTING, "Add a kind".
"""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.spec import AnalysisSpec
from investigator.kinds import (
    broad_based,
    data_quality,
    driver_tree,
    mix_rate,
    no_change,
    offsetting,
    outrunner,
    record,
    reversal,
    seasonality,
    segment,
    unlocalized,
    whole_series,
)
from investigator.kinds.base import Case, Kind, Reading, Test
from investigator.kinds.common import sized
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.hypotheses import Hypothesis, HypothesisKind, Status

KINDS: tuple[Kind, ...] = (
    data_quality.KIND,  # a move the data invented has no business cause
    record.KIND,  # a new record is to be explained, whatever its size
    reversal.KIND,  # so is the end of a steady run
    seasonality.KIND,  # the calendar's move leaves nothing to a broad move
    whole_series.KIND,  # a single series: the whole of it moved
    mix_rate.KIND,  # a ratio: the denominator's mix, or its rate inside a segment
    segment.KIND,  # a segment beyond its fair share
    offsetting.KIND,  # a segment far outside its history that offset a named one
    outrunner.KIND,  # a quiet total that hid one segment's outbreak
    unlocalized.KIND,  # short history, or a move localization was silent on
    broad_based.KIND,  # everything moved alike
    driver_tree.KIND,  # which factor of the metric's tree moved: a second axis, after the segments
    no_change.KIND,  # nothing else: within normal variation
)

__all__ = [
    "KINDS",
    "Case",
    "Kind",
    "Reading",
    "Test",
    "cause_kinds",
    "confirmed_by",
    "late_causes",
    "notes",
    "owner",
    "read",
    "root_causes",
    "seed_hypotheses",
    "test_for",
    "words",
]  # fmt: skip


def root_causes(evidence: Evidence, spec: AnalysisSpec) -> list[RootCause]:
    """Most important first: each kind in precedence order adds the causes its rule accepts,
    seeing those accepted before it; a segment's share past 300% of a flat total's net change is
    given as a share of the gross movement (`common.sized`)."""
    case = Case(evidence, spec, notable=any(kind.notable(evidence) for kind in KINDS))
    for kind in KINDS:
        if kind.needs_dimensions and not spec.dimensions:
            continue
        found = kind.decide(case)
        case = case._replace(accepted=case.accepted + tuple((kind.name, c) for c in found))
    return [sized(c) for c in case.causes]


def cause_kinds() -> list[str]:
    """Every kind of cause a conclusion may name, in precedence order (for the model's prompt)."""
    return list(dict.fromkeys(c for kind in KINDS for c in kind.causes))


def late_causes() -> set[str]:
    """The kinds of cause whose fall an approved late-data fact can explain: rows of a segment (or
    of every segment alike) not loaded yet look like that segment falling."""
    return {c for kind in KINDS for c in kind.late}


def seed_hypotheses(spec: AnalysisSpec) -> list[Hypothesis]:
    """The candidate explanations each kind offers for this metric and its dimensions."""
    items = [h for kind in KINDS for h in kind.hypotheses(spec)]
    return [Hypothesis(id=f"H{i}", statement=s, kind=k) for i, (k, s) in enumerate(items, 1)]


def test_for(hypothesis: HypothesisKind) -> Test:
    """How the offline planner tests a hypothesis of this kind."""
    return next(kind.tests[hypothesis] for kind in KINDS if hypothesis in kind.tests)


def read(result: AnalysisResult) -> Reading | None:
    """Every kind's reading of one result, joined: the finding's sentences and their updates."""
    readings = [r for kind in KINDS if (r := kind.read(result)) is not None]
    if not readings:
        return None
    text = " ".join(r.text for r in readings if r.text)
    return Reading(text or None, [u for r in readings for u in r.updates])


def notes(evidence: Evidence) -> str:
    """The sentences the kinds add to the headline (a record, the end of a steady run)."""
    return "".join(kind.note(evidence) for kind in KINDS)


def owner(cause: RootCause, spec: AnalysisSpec) -> Kind | None:
    """The kind that says and checks a cause: the first that owns it."""
    return next((kind for kind in KINDS if kind.owns(cause, spec)), None)


def words(cause: RootCause, evidence: Evidence, spec: AnalysisSpec) -> str:
    """A cause in the conclusion's words."""
    kind = owner(cause, spec)
    return kind.words(cause, evidence) if kind is not None else cause.kind


def confirmed_by(hypotheses: list[Hypothesis], causes: list[RootCause]) -> list[Hypothesis]:
    """The table as the conclusion reads it: a hypothesis that a concluded cause stands for is
    CONFIRMED by that cause, whatever one analysis said of it before. The verdict weighs the
    analyses together (a segment localization did not single out can still carry a move far
    beyond its size), and a table that rules out what the headline names misleads."""
    confirms = {c: h for kind in KINDS for c, h in kind.confirms.items()}
    out = []
    for h in hypotheses:
        cause = next((c for c in causes if confirms.get(c.kind) == h.kind), None)
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
