"""Each loop rule, driven by a scripted planner over real data in an in-process executor."""

from __future__ import annotations

from itertools import count
from pathlib import Path
from typing import Any

import pytest

from investigator.config import Settings, load_settings
from investigator.kernels.inprocess import InProcessKernel
from investigator.report.model import Report
from investigator.request import Request
from investigator.run.decision import Decision, DecisionType, RootCause
from investigator.run.hypotheses import Status
from investigator.run.state import load, run_dir
from investigator.runner import run_loop
from investigator.runs import new_run
from investigator.testing.scripted import ScriptedPlanner, analyze, conclude

_n = count()


WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


def unique_print() -> Decision:
    """A step whose output differs every time and moves no hypothesis."""
    i = next(_n)
    text = " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] * (1 + (i + k) % 3) for k in range(6))
    return analyze(f"print({text!r}, {i})")


def run(data: Path, planner: ScriptedPlanner, tmp_path: Path, **overrides: object) -> tuple[Report, Settings]:
    settings = load_settings(runs_dir=tmp_path / "runs", **overrides)
    state = new_run(Request(metric="revenue", data=str(data)), data, settings, planner="scripted")
    report = run_loop(state, settings, planner, InProcessKernel())
    return report, settings


def decisions(report: Report, settings: Settings) -> list[Decision]:
    return load(run_dir(settings.runs_dir, report.run_id)).decisions


def test_conclude_exits_the_loop(segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    planner = ScriptedPlanner([unique_print(), unique_print(), unique_print(), conclude()])
    report, _ = run(segment_drop[0], planner, tmp_path)
    assert report.status == "concluded"
    assert report.stats.iterations == 4
    assert len(planner.contexts) == 4


def test_max_iterations_gives_a_partial_conclusion(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    planner = ScriptedPlanner([], then=lambda ctx: unique_print())
    report, _ = run(segment_drop[0], planner, tmp_path, max_iterations=5, stall_threshold=50)
    assert report.status == "partial"
    assert report.stats.iterations == 5
    assert "max_iterations" in (report.stop_reason or "")
    assert planner.contexts[-1].must_conclude


def test_conclusion_before_minimum_is_refused(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    planner = ScriptedPlanner([conclude(), unique_print(), unique_print(), conclude()])
    report, _ = run(segment_drop[0], planner, tmp_path)
    assert report.status == "concluded"
    assert report.findings[1].summary.startswith("Conclusion refused: only 0 step(s)")
    assert planner.contexts[1].notice and "refused" in planner.contexts[1].notice
    assert report.stats.iterations == 4


def test_code_error_is_shown_to_the_planner_next_iteration(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    planner = ScriptedPlanner([analyze("1/0"), unique_print(), unique_print(), conclude()])
    run(segment_drop[0], planner, tmp_path)
    nxt = planner.contexts[1]
    assert "ZeroDivisionError" in (nxt.notice or "")
    assert "ZeroDivisionError" in nxt.last_result
    assert "ZeroDivisionError" in nxt.findings[-1].summary


def test_three_errors_in_a_row_force_a_pivot(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    bad = [analyze(f"raise ValueError('broken {i}')", hypothesis_id="H1") for i in range(3)]
    planner = ScriptedPlanner([*bad, unique_print(), conclude()])
    report, settings = run(segment_drop[0], planner, tmp_path, stall_threshold=50)
    ds = decisions(report, settings)
    assert [d.type for d in ds[:4]] == [DecisionType.ANALYZE] * 3 + [DecisionType.PIVOT]
    assert "3 code errors in a row" in ds[3].rationale
    h1 = next(h for h in report.hypotheses if h.id == "H1")
    assert h1.status == Status.RULED_OUT and "abandoned" in h1.evidence
    assert ds[3].hypothesis_id == "H2"


def test_no_progress_for_threshold_steps_forces_a_pivot(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    planner = ScriptedPlanner([], then=lambda ctx: unique_print())
    report, settings = run(segment_drop[0], planner, tmp_path, stall_threshold=3, max_iterations=8)
    ds = decisions(report, settings)
    pivots = [i for i, d in enumerate(ds) if d.type == DecisionType.PIVOT]
    # H1 becomes INVESTIGATING at step 1 (progress), then 3 idle steps -> forced pivot as the 5th decision
    assert pivots and pivots[0] == 4
    assert "no hypothesis progress in 3 steps" in ds[pivots[0]].rationale


def test_near_identical_findings_force_a_pivot(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    same = analyze("print('revenue is 42')")
    planner = ScriptedPlanner([same, same, same, unique_print(), conclude()])
    report, settings = run(segment_drop[0], planner, tmp_path, stall_threshold=50)
    ds = decisions(report, settings)
    assert ds[3].type == DecisionType.PIVOT
    assert "near-identical" in ds[3].rationale


def test_stall_with_nothing_left_concludes(segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    def rule_out_all(ctx):  # type: ignore[no-untyped-def]
        pending = [h for h in ctx.hypotheses if h.open]
        if pending:
            return Decision(type=DecisionType.PIVOT, rationale="next", hypothesis_id=pending[-1].id)
        return unique_print()

    planner = ScriptedPlanner([], then=rule_out_all)
    report, _ = run(segment_drop[0], planner, tmp_path, stall_threshold=2, max_iterations=30)
    assert report.status == "partial"
    assert "stalled" in (report.stop_reason or "")
    assert report.stats.iterations < 30


def test_unverifiable_conclusion_is_refused_then_a_true_one_passes(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    wrong = conclude(
        [RootCause(kind="segment_change", segment={"channel": "carrier_pigeon"}, contribution=0.9)]
    )
    flipped = conclude([RootCause(kind="segment_change", segment={"channel": "social"}, contribution=-0.9)])
    right = conclude([RootCause(kind="segment_change", segment={"channel": "social"}, contribution=1.0)])
    planner = ScriptedPlanner([unique_print(), unique_print(), unique_print(), wrong, flipped, right])
    report, _ = run(segment_drop[0], planner, tmp_path)
    refusals = [f.summary for f in report.findings if "verification failed" in f.summary]
    assert len(refusals) == 2
    assert "does not occur" in refusals[0]
    assert "opposite sign" in refusals[1]
    assert report.status == "concluded"
    assert report.root_causes[0].verified is True


def test_partial_conclusion_never_lists_a_cause_that_fails_its_check(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    wrong = conclude([RootCause(kind="broad_based")], text="everything fell alike")
    planner = ScriptedPlanner([], then=lambda ctx: wrong if ctx.must_conclude else unique_print())
    report, _ = run(segment_drop[0], planner, tmp_path, max_iterations=4, stall_threshold=50)
    assert report.status == "partial"
    # the claim fails its check; the evidence gathered (movement only) names no cause: say so
    assert report.root_causes == []
    assert "No root cause could be established" in report.conclusion


def test_partial_conclusion_falls_back_to_the_evidence_that_holds(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    path = segment_drop[0]
    wrong = conclude([RootCause(kind="broad_based")], text="everything fell alike")
    explain = analyze("emit(explain_segments(cube, spec))", why="localize")
    planner = ScriptedPlanner([explain], then=lambda ctx: wrong if ctx.must_conclude else unique_print())
    report, _ = run(path, planner, tmp_path, max_iterations=4, stall_threshold=50)
    assert report.status == "partial"
    assert [c.segment for c in report.root_causes] == [{"channel": "social"}]
    assert all(c.verified for c in report.root_causes) and "broad" not in report.conclusion


def test_checkpoint_after_every_iteration(segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    seen: list[int] = []
    settings = load_settings(runs_dir=tmp_path / "runs")
    data = segment_drop[0]
    state = new_run(Request(metric="revenue", data=str(data)), data, settings, planner="scripted")
    folder = run_dir(settings.runs_dir, state.run_id)
    planner = ScriptedPlanner([unique_print(), unique_print(), unique_print(), conclude()])
    run_loop(state, settings, planner, InProcessKernel(), lambda s, d: seen.append(load(folder).iteration))
    assert seen == [1, 2, 3, 4]


@pytest.mark.parametrize("ranked", [["H3", "H1"], ["nope", "H2"]])
def test_reranking_and_blockers_reach_the_report(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path, ranked: list[str]
) -> None:
    d = unique_print().model_copy(update={"reranked": ranked, "blockers": ["need refunds table"]})
    planner = ScriptedPlanner([d, unique_print(), unique_print(), conclude()])
    report, _ = run(segment_drop[0], planner, tmp_path)
    known = [r for r in ranked if r.startswith("H") and r != "nope"]
    assert [h.id for h in report.hypotheses][: len(known)] == known
    assert report.blockers == ["need refunds table"]
