"""The HTML report's footer reads the run's token meter: a model's tokens are said, the offline
planner's zero is not."""

from __future__ import annotations

from typing import Any

from investigator.report.html import _footer
from investigator.report.model import ModelSteps, Report, Stats
from investigator.run.tokens import TokenMeter, Usage


def partial(**fields: Any) -> Report:
    """A report with only the fields the footer reads (`model_construct` validates nothing)."""
    return Report.model_construct(**fields)


def _report(tokens: TokenMeter) -> Report:
    stats = Stats(iterations=4, elapsed_s=12.5, planner="llm", tokens=tokens)
    return partial(stats=stats, blockers=[], run_id="20250301-101500-0a1b2c", stop_reason=None)


def test_the_footer_says_the_tokens_a_model_used() -> None:
    meter = TokenMeter().spent(Usage().counted("decide", 12000, 345), 2400)
    footer = _footer(_report(meter))
    assert "4 iterations in 12.5s with the llm planner, 12,345 tokens; run 20250301-101500-0a1b2c." in footer


def test_the_footer_leaves_out_an_offline_runs_zero() -> None:
    footer = _footer(_report(TokenMeter().spent(Usage(), 2400)))
    assert "planner; run 20250301-101500-0a1b2c." in footer and "tokens" not in footer


def test_the_footer_says_what_the_model_decided_and_warns_when_most_fell_back() -> None:
    steps = ModelSteps(decided=1, reasked=1, fell_back=6)
    stats = Stats(iterations=7, elapsed_s=1124.2, planner="llm", model=steps)
    footer = _footer(partial(stats=stats, blockers=[], run_id="r1", stop_reason=None))
    assert "with the llm planner (the model decided 1 of 7 steps (1 after a re-ask), 6 fell back" in footer
    assert "this model could not follow the format: try a larger model or --planner offline" in footer
    fine = Stats(iterations=7, elapsed_s=1.0, planner="llm", model=ModelSteps(decided=6, fell_back=1))
    footer = _footer(partial(stats=fine, blockers=[], run_id="r1", stop_reason=None))
    assert "the model decided 6 of 7 steps" in footer and "could not follow" not in footer
