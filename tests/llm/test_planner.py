"""The LLM planner on its own: what it sends, how it falls back, reflection and the token budget."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from investigator.analysis.quality import QualityReport
from investigator.analysis.seasonality import Seasonality
from investigator.config import Settings
from investigator.llm import LLMSettings
from investigator.llm.prompts import system_prompt, template
from investigator.planners.llm import FALLBACK, LLMPlanner
from investigator.planners.offline import OfflinePlanner
from investigator.request import Request
from investigator.run.compress import Compressed
from investigator.run.context import Context, build_context
from investigator.run.decision import Decision, DecisionType
from investigator.run.hypotheses import Status, Update
from investigator.run.rules import apply_updates
from investigator.run.tokens import Usage
from investigator.runs import new_run
from investigator.testing import FakeOpenAI, answer, malformed
from sandbox.models import ExecResult

from .helpers import loop_settings

STEP = {
    "type": "ANALYZE",
    "rationale": "Rule out data quality.",
    "hypothesis_id": "H1",
    "code": "emit(quality_checks(table, spec, daily))",
}
REFLECTION = {
    "assessment": "Segments look most promising.",
    "reranked": ["H3", "H1"],
    "blockers": ["Only 120 days: seasonality cannot be tested."],
}
LLM = Callable[..., LLMSettings]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return loop_settings(tmp_path)


@pytest.fixture
def context(scenario: tuple[Path, dict[str, Any]], settings: Settings) -> Callable[..., Context]:
    path, truth = scenario
    request = Request(
        metric="revenue", data=str(path), end=truth["end"], time_column="date", dimensions=truth["dimensions"]
    )
    state = new_run(request, str(path), settings, planner="llm")

    def make(iteration: int = 0, **kw: Any) -> Context:
        return build_context(state.model_copy(update={"iteration": iteration}), settings, **kw)

    return make


def test_each_call_sends_only_the_templates_and_the_bounded_context(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer(STEP), answer(STEP))
    planner = LLMPlanner(llm_settings(), settings)
    ctx = context()
    decision = planner.decide(ctx)
    planner.decide(context(iteration=1))
    assert decision == Decision(**STEP, answered_by="model")
    first, second = server.requests
    assert first.body["messages"] == [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": template("decide").replace("{context}", ctx.render())},
    ]
    assert len(second.body["messages"]) == 2  # no history carried over
    used = planner.take_usage()
    assert used.decide_in > 0 and used.decide_out > 0
    assert planner.take_usage() == Usage()  # the loop is handed each token once


def test_invalid_output_falls_back_to_the_offline_step_and_the_finding_says_so(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(
        malformed(), malformed(), malformed(), answer({"summary": "No data-quality issue.", "updates": []})
    )
    planner = LLMPlanner(llm_settings(max_validation_retries=2), settings)
    ctx = context()
    decision = planner.decide(ctx)
    offline = OfflinePlanner().decide(ctx)
    assert (decision.type, decision.code, decision.hypothesis_id) == (
        offline.type,
        offline.code,
        offline.hypothesis_id,
    )
    assert decision.rationale.startswith(f"{FALLBACK}: invalid answer after 3 attempt(s)")
    compressed = planner.compress(decision, ExecResult(ok=True, stdout="ok"), Compressed(summary="library"))
    assert compressed.summary.startswith(FALLBACK) and compressed.summary.endswith("No data-quality issue.")


def test_compress_keeps_the_library_record_and_adds_the_model_words_as_commentary(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    finding = {
        "summary": "Quality is fine: no duplicates.",
        "updates": [
            {"hypothesis_id": "H1", "status": "CONFIRMED", "evidence": "a duplicate"},
            {"hypothesis_id": "H3", "status": "INVESTIGATING", "evidence": "segments next"},
        ],
    }
    server.script(answer(STEP), answer(finding, to="StepFinding"))
    planner = LLMPlanner(llm_settings(), settings)
    ctx = context()
    decision = planner.decide(ctx)
    assert next(h.kind for h in ctx.hypotheses if h.id == "H1") == "data_quality"
    library = Compressed(
        summary="Checked duplicates: no issue found.",
        updates=[Update(kind="data_quality", status=Status.RULED_OUT, evidence="lib")],
        results=[QualityReport(metric="revenue", numerator_change=-1.0, issues=[])],
    )
    out = planner.compress(decision, ExecResult(ok=True, stdout="QualityReport(issues=[])"), library)
    commentary = "(Model's reading: Quality is fine: no duplicates.)"
    assert out.summary == f"Checked duplicates: no issue found. {commentary}"
    assert out.results == library.results
    # the library settled H1 (data_quality): the model's contrary status is not applied
    assert [(u.kind or u.hypothesis_id, u.status) for u in out.updates] == [
        ("data_quality", Status.RULED_OUT),
        ("H3", Status.INVESTIGATING),
    ]
    record = server.calls("StepFinding")[0].text
    assert "QualityReport(issues=[])" in record and "Checked duplicates: no issue found." in record
    assert "| H1 | PENDING |" in record
    assert set(planner.take_usage().model_dump()) == {
        "decide_in",
        "decide_out",
        "compress_in",
        "compress_out",
    }


def test_a_summary_that_contradicts_the_library_does_not_overrule_it(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    """Seasonality was NOT_TESTABLE; the model said it was seasonal, and its words replaced the
    library's summary (ending in a JSON fragment) and its status the library's."""
    ctx = context()
    seasonal = next(h.id for h in ctx.hypotheses if h.kind == "seasonality")
    finding = {
        "summary": 'The movement is seasonal. {"updates": [{"hypothesis_id": "' + seasonal + '"',
        "updates": [{"hypothesis_id": seasonal, "status": "CONFIRMED", "evidence": "seasonal"}],
    }
    server.script(answer(STEP), answer(finding, to="StepFinding"))
    planner = LLMPlanner(llm_settings(), settings)
    decision = planner.decide(ctx)
    why = "the history does not reach the comparable period a year back"
    result = Seasonality(
        metric="revenue", change_pct=-0.2, comparisons=[], best_lag_days=None, best_change_pct=None,
        seasonal=False, available=False, reason=why,
    )  # fmt: skip
    library = Compressed(
        summary=f"Seasonality cannot be tested: {why}.",
        updates=[Update(kind="seasonality", status=Status.NOT_TESTABLE, evidence=f"not testable: {why}")],
        results=[result],
    )
    out = planner.compress(decision, ExecResult(ok=True), library)
    assert out.summary.startswith(f"Seasonality cannot be tested: {why}.")
    assert out.summary.endswith("(Model's reading: The movement is seasonal.)")  # no JSON fragment
    hyps = apply_updates(ctx.hypotheses, out.updates)
    assert next(h.status for h in hyps if h.id == seasonal) == Status.NOT_TESTABLE


def test_a_step_without_a_typed_result_takes_the_model_reading_as_its_finding(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer(STEP), answer({"summary": "Revenue fell 12% in JP.", "updates": []}))
    planner = LLMPlanner(llm_settings(), settings)
    decision = planner.decide(context())
    library = Compressed(summary="Test it. Output: country JP -0.12")
    assert planner.compress(decision, ExecResult(ok=True), library).summary == "Revenue fell 12% in JP."


def test_compress_falls_back_to_the_library_summary(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer(STEP), answer({"summary": 3}, to="StepFinding"))
    planner = LLMPlanner(llm_settings(max_validation_retries=0), settings)
    decision = planner.decide(context())
    out = planner.compress(decision, ExecResult(ok=True), Compressed(summary="Library summary."))
    assert out.summary.startswith(f"{FALLBACK}: library summary used (invalid answer after 1 attempt")
    assert out.summary.endswith(")] Library summary.")


def test_reflection_every_n_iterations_reranks_and_raises_blockers(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer(STEP), answer(REFLECTION, to="Reflection"), answer(STEP))
    planner = LLMPlanner(llm_settings(reflect_every=2), settings)
    quiet = planner.decide(context(iteration=1))
    reflected = planner.decide(context(iteration=2))
    assert [r.name for r in server.requests] == ["NextStep", "Reflection", "NextStep"]
    assert quiet.reranked is None and quiet.blockers == []
    assert reflected.reranked == ["H3", "H1"] and reflected.blockers == REFLECTION["blockers"]
    assert "Reflection: Segments look most promising." in reflected.rationale
    assert planner.take_usage().reflect_in > 0


def test_a_failed_reflection_is_skipped(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer({"assessment": "x", "reranked": ["H42"]}, to="Reflection"), answer(STEP))
    planner = LLMPlanner(llm_settings(reflect_every=5, max_validation_retries=0), settings)
    decision = planner.decide(context(iteration=5))
    assert decision.type == DecisionType.ANALYZE and decision.reranked is None
    assert "Reflection skipped" in decision.rationale and "H42" in decision.rationale


def test_must_conclude_is_enforced_by_validation(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    cause = {"kind": "segment_change", "segment": {"country": "JP"}, "contribution": 0.8}
    conclude = {"type": "CONCLUDE", "rationale": "asked to", "conclusion": "JP.", "root_causes": [cause]}
    server.script(answer(STEP), answer(conclude))
    planner = LLMPlanner(llm_settings(), settings)
    decision = planner.decide(context(must_conclude=True))
    assert decision.type == DecisionType.CONCLUDE and decision.root_causes[0].segment == {"country": "JP"}
    assert "you must CONCLUDE now" in server.requests[1].text


def test_no_call_once_the_token_budget_is_used(
    server: FakeOpenAI, llm_settings: LLM, tmp_path: Path, context: Callable[..., Context]
) -> None:
    server.script(answer(STEP, usage=(900, 100)), answer(STEP))
    planner = LLMPlanner(llm_settings(), loop_settings(tmp_path, max_tokens_per_run=1000))
    planner.decide(context(tokens_left=1000))
    assert planner.take_usage() == Usage(decide_in=900, decide_out=100)  # the loop counts them
    decision = planner.decide(context(iteration=1, tokens_left=0))
    assert len(server.requests) == 1
    assert decision.rationale.startswith(f"{FALLBACK}: the token budget (1000) is used")


def test_an_oversized_context_is_refused_without_sending(
    server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    ctx = context()
    huge = ctx.model_copy(update={"objective": "why? " * 8000})  # not fitted by the loop
    decision = LLMPlanner(llm_settings(), settings).decide(huge)
    assert server.requests == []
    assert decision.rationale.startswith(FALLBACK) and "over context_budget_tokens" in decision.rationale


@pytest.mark.parametrize("code", [".369847,", "# look at the data", "42", "'JP'", "x = 1", "import pandas"])
def test_code_that_cannot_be_an_analysis_is_re_asked_with_a_reason(
    code: str, server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer({**STEP, "code": code}), answer(STEP))
    decision = LLMPlanner(llm_settings(), settings).decide(context())
    assert decision.code == STEP["code"] and decision.reasks == 1
    assert "the code does nothing: it calls no function and reads no name" in server.requests[1].text


@pytest.mark.parametrize("code", ["daily", "cube['country']", "emit(explain_segments(cube, spec))"])
def test_code_that_reads_the_workspace_or_calls_is_taken_at_once(
    code: str, server: FakeOpenAI, llm_settings: LLM, settings: Settings, context: Callable[..., Context]
) -> None:
    server.script(answer({**STEP, "code": code}))
    decision = LLMPlanner(llm_settings(), settings).decide(context())
    assert decision.code == code and decision.reasks == 0
