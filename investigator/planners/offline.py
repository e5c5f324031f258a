"""The deterministic offline planner: no network, same evidence -> same decisions.

It works through the hypotheses in the kinds' order (`investigator.kinds.KINDS`), testing each with
the kernel code its kind gives, drills into the
segments it finds, pivots when a hypothesis is ruled out, and concludes from the evidence.
"""

from __future__ import annotations

import re

from investigator.analysis.causes import RootCause
from investigator.analysis.spec import AnalysisSpec
from investigator.fmt import seg
from investigator.kinds import test_for
from investigator.memory.models import FactKind, FactProposal, fact_id
from investigator.run.compress import Compressed
from investigator.run.context import Context
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Hypothesis, HypothesisKind, Status
from investigator.run.tokens import Usage
from investigator.run.verdict import conclusion_text, confidence, root_causes, with_facts
from sandbox.models import ExecResult

MAX_DRILLS = 3


class OfflinePlanner:
    """The planner without a model. It exists so that a run needs no key, and so that tests and
    benchmarks are repeatable: the same evidence gives the same decisions. The LLM planner falls
    back to it for a step whose answer could not be used, so a bad answer costs a step, not the run."""

    name = "offline"

    def compress(self, decision: Decision, result: ExecResult, structured: Compressed) -> Compressed:
        return structured

    def take_usage(self) -> Usage:
        return Usage()  # no model, no tokens

    def decide(self, context: Context) -> Decision:
        if context.must_conclude:
            return self.conclude(context)
        hyps = context.hypotheses
        for h in hyps:
            test = test_for(h.kind)
            if test.tested(context.evidence) or not h.open:
                continue
            if h.status == Status.PENDING and _just_ruled_out(context):
                return Decision(
                    type=DecisionType.PIVOT,
                    hypothesis_id=h.id,
                    rationale=f"{context.findings[-1].hypothesis_id} is ruled out; "
                    f"pivot to {h.id}: {h.statement}",
                )
            return Decision(type=DecisionType.ANALYZE, hypothesis_id=h.id, rationale=test.why, code=test.code)
        drill = self._next_drill(context)
        if drill is not None:
            return drill
        return self.conclude(context)

    def _next_drill(self, context: Context) -> Decision | None:
        """Drill into each localized segment once, to check it is the right depth."""
        evidence = context.evidence
        if evidence.segments is None or (evidence.ratio is not None and evidence.ratio.driver == "mix"):
            return None
        target = _hypothesis(context.hypotheses, "rate" if context.spec.is_ratio else "segments")
        for e in evidence.segments.elements[:MAX_DRILLS]:
            if evidence.drilled(e.segment) is not None:
                continue
            return Decision(
                type=DecisionType.DRILL_DOWN,
                hypothesis_id=target.id if target else None,
                rationale=f"Drill into {seg(e.segment)} ({e.share:.0%} of the change): is the change "
                "spread over its children or held by one of them?",
                code=f"drill = drill_down(cube, spec, {e.segment!r})\nemit(drill)",
            )
        return None

    def conclude(self, context: Context) -> Decision:
        """The evidence's causes, read with the approved facts (a known late-landing segment's
        drop is incomplete recent data), and data problems proposed as facts for people to review."""
        causes = with_facts(
            root_causes(context.evidence, context.spec), context.facts, context.spec, context.evidence
        )
        return Decision(
            type=DecisionType.CONCLUDE,
            rationale="Every hypothesis has been tested."
            if not context.must_conclude
            else "Asked to conclude now.",
            conclusion=conclusion_text(causes, context.evidence, context.spec, context.facts),
            confidence=confidence(causes, context.evidence),
            root_causes=causes,
            proposed_facts=proposals(causes, context.spec),
        )


_LAST = re.compile(r"the last (\d+) days? ")


def proposals(causes: list[RootCause], spec: AnalysisSpec) -> list[FactProposal]:
    """Each data problem found, as a fact a person may confirm: late recent days as a `late_data`
    fact the next runs act on, other problems as notes. Worded without this run's numbers, so the
    same problem found again is the same proposal."""
    out = []
    kind: FactKind
    for c in causes:
        if c.kind != "data_quality" or c.detail is None:
            continue
        where = f"{seg(c.segment)} data" if c.segment else f"{spec.metric} data"
        lag = _LAST.search(c.evidence) if c.detail == "incomplete_recent_data" else None
        if lag is not None:
            kind, days = "late_data", int(lag.group(1))
            text = f"{where} lands about {days} days late: the last days of a window are incomplete"
        else:
            kind, days = "note", None
            text = f"{where} has had {c.detail.replace('_', ' ')} in the {spec.metric} data"
        fid = fact_id(kind, c.segment, days, [spec.metric], text)
        out.append(
            FactProposal(id=fid, topic=spec.metric, text=text, kind=kind, segment=c.segment,
                         lag_days=days, metrics=[spec.metric], evidence=c.evidence)
        )  # fmt: skip
    return out


def _hypothesis(hyps: list[Hypothesis], kind: HypothesisKind) -> Hypothesis | None:
    return next((h for h in hyps if h.kind == kind), None)


def _just_ruled_out(context: Context) -> bool:
    if not context.findings:
        return False
    last = context.findings[-1].hypothesis_id
    closed = (Status.RULED_OUT, Status.NOT_TESTABLE)
    return any(h.id == last and h.status in closed for h in context.hypotheses)
