"""`fit` shrinks a context in a fixed order until it holds the token budget."""

from __future__ import annotations

import re

import pytest

from investigator.kinds import seed_hypotheses
from investigator.run.context import Context, cut, fit
from investigator.run.state import Finding

from ..analysis.helpers import spec

SPEC = spec()
LONG_RESULT = "HEAD" + "".join(chr(97 + i * 7 % 26) for i in range(20_000)) + "TAIL"
FILES = [f"workspace_output_{k:02d}_with_a_rather_long_name.parquet" for k in range(30)]


def finding(i: int, size: int = 400) -> Finding:
    return Finding(iteration=i, decision="ANALYZE", summary=f"finding {i} " + "x" * size)


def context(
    findings: int = 10,
    summary: int = 400,
    last_result: str = "",
    files: list[str] | None = None,
    objective: str = "Why did revenue fall?",
    evidence: str = "",
) -> Context:
    hypotheses = [h.model_copy(update={"evidence": evidence}) for h in seed_hypotheses(SPEC)]
    return Context(
        objective=objective,
        spec=SPEC,
        iteration=findings,
        max_iterations=20,
        min_iterations_before_conclude=2,
        hypotheses=hypotheses,
        findings=[finding(i, summary) for i in range(1, findings + 1)],
        workspace_files=list(files or []),
        last_result=last_result,
    )


def with_(ctx: Context, **update: object) -> Context:
    return ctx.model_copy(update=update)


def test_a_context_within_budget_is_returned_unchanged() -> None:
    ctx = context(last_result=LONG_RESULT, files=FILES)
    assert fit(ctx, ctx.tokens) == ctx
    assert fit(ctx, 10**6) == ctx


def test_the_oldest_findings_go_first() -> None:
    ctx = context(last_result="x" * 1000, files=FILES)
    budget = with_(ctx, findings=ctx.findings[-4:]).tokens  # exactly what the last four need
    out = fit(ctx, budget)
    assert [f.iteration for f in out.findings] == [7, 8, 9, 10]
    assert out.findings == ctx.findings[-4:]  # kept whole
    assert out.last_result == ctx.last_result and out.workspace_files == FILES
    assert out.tokens <= budget


def test_findings_go_down_to_two_then_the_last_result_is_cut_head_and_tail_kept() -> None:
    ctx = context(last_result=LONG_RESULT, files=FILES)
    budget = with_(ctx, findings=ctx.findings[-2:], last_result="r" * 2000).tokens
    out = fit(ctx, budget)
    assert [f.iteration for f in out.findings] == [9, 10]
    assert out.findings == ctx.findings[-2:]
    assert 200 < len(out.last_result) <= 2000
    assert out.last_result.startswith("HEAD") and out.last_result.endswith("TAIL")
    assert "characters cut] ..." in out.last_result
    assert out.workspace_files == FILES  # not needed: kept
    assert out.tokens <= budget


def test_then_workspace_files_go_from_the_end() -> None:
    ctx = context(last_result=LONG_RESULT, files=FILES)
    budget = with_(ctx, findings=ctx.findings[-2:], last_result="r" * 200, workspace_files=FILES[:10]).tokens
    out = fit(ctx, budget)
    assert len(out.findings) == 2
    assert len(out.last_result) <= 200 and out.last_result.startswith("HEAD")
    assert 0 < len(out.workspace_files) < len(FILES)
    assert out.workspace_files == FILES[: len(out.workspace_files)]
    assert out.findings == ctx.findings[-2:]  # texts are not cut while dropping files is enough
    assert out.tokens <= budget


def test_long_texts_are_cut_last() -> None:
    ctx = context(
        summary=5000, last_result=LONG_RESULT, files=FILES, objective="O" * 5000, evidence="E" * 2000
    )
    smallest = with_(
        ctx,
        findings=[f.model_copy(update={"summary": cut(f.summary, 300)}) for f in ctx.findings[-2:]],
        hypotheses=[h.model_copy(update={"evidence": cut(h.evidence, 150)}) for h in ctx.hypotheses],
        objective=cut(ctx.objective, 1000),
        workspace_files=[],
        last_result="r" * 200,
    )
    budget = smallest.tokens
    out = fit(ctx, budget)
    assert out.tokens <= budget
    assert out.workspace_files == [] and len(out.last_result) <= 200
    assert [f.iteration for f in out.findings] == [9, 10]
    assert all(len(f.summary) <= 300 and "characters cut" in f.summary for f in out.findings)
    assert all(f.summary.startswith(f"finding {f.iteration} ") for f in out.findings)
    assert all(len(h.evidence) <= 150 for h in out.hypotheses)
    assert len(out.objective) <= 1000 and out.objective.startswith("OOO")
    assert [h.statement for h in out.hypotheses] == [h.statement for h in ctx.hypotheses]


def test_texts_are_left_whole_when_they_are_short() -> None:
    ctx = context(findings=2, summary=100, files=FILES)
    out = fit(ctx, with_(ctx, workspace_files=[]).tokens - 1)  # too small even without files
    assert out.workspace_files == []
    assert out.findings == ctx.findings and out.objective == ctx.objective  # nothing long to cut


@pytest.mark.parametrize("frac", [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])
def test_the_result_fits_every_budget_that_can_be_met(frac: float) -> None:
    ctx = context(
        findings=12,
        summary=3000,
        last_result=LONG_RESULT,
        files=FILES,
        objective="O" * 3000,
        evidence="E" * 900,
    )
    floor = with_(
        ctx,
        findings=[f.model_copy(update={"summary": cut(f.summary, 300)}) for f in ctx.findings[-2:]],
        hypotheses=[h.model_copy(update={"evidence": cut(h.evidence, 150)}) for h in ctx.hypotheses],
        objective=cut(ctx.objective, 1000),
        workspace_files=[],
        last_result="r" * 200,
    ).tokens
    budget = int(floor + frac * (ctx.tokens - floor))
    out = fit(ctx, budget)
    assert out.tokens <= budget
    assert out.findings[-1].iteration == 12  # the newest finding is always kept


def test_the_cut_marker_counts_every_character_cut_from_the_output() -> None:
    ctx = context(findings=2, last_result=LONG_RESULT)
    out = fit(ctx, with_(ctx, last_result="r" * 1500).tokens)
    markers = re.findall(r"\[(\d+) characters cut\]", out.last_result)
    assert len(markers) == 1
    shown = len(out.last_result) - len(f"\n... [{markers[0]} characters cut] ...\n")
    assert int(markers[0]) == len(LONG_RESULT) - shown
