"""The context is rebuilt from state, bounded, and holds only what the design says."""

from __future__ import annotations

from pathlib import Path

from investigator.config import load_settings
from investigator.kernels.inprocess import InProcessKernel
from investigator.request import Request
from investigator.run.context import build_context, cut
from investigator.run.state import Finding
from investigator.runner import run_loop
from investigator.runs import new_run
from investigator.testing.scripted import ScriptedPlanner, Step, analyze


def test_cut_keeps_head_and_tail_with_a_marker() -> None:
    text = "HEAD" + "x" * 10_000 + "TAIL"
    out = cut(text, 500)
    assert len(out) <= 500 and out.startswith("HEAD") and out.endswith("TAIL")
    assert "characters cut" in out


def test_context_stays_within_budget_after_50_iterations(
    segment_drop: tuple[Path, object], tmp_path: Path
) -> None:
    data = segment_drop[0]
    settings = load_settings(runs_dir=tmp_path / "runs", max_iterations=52, stall_threshold=100)
    # every step prints 30k characters of distinct text and writes a file: the worst case for the context
    steps: list[Step] = [
        analyze(
            f"print(''.join(chr(97 + (i * {k}) % 26) for i in range(30000)))\n"
            f"with open('out_{k}.txt', 'w') as f:\n    f.write('x')",
            why=f"step {k} " + "because " * 200,
        )
        for k in range(1, 51)
    ]
    planner = ScriptedPlanner(steps)
    state = new_run(Request(metric="revenue", data=str(data)), data, settings, planner="scripted")
    report = run_loop(state, settings, planner, InProcessKernel(tmp_path / "ws"))
    assert report.stats.iterations == 51
    budget = settings.context_budget_tokens
    assert all(c.tokens <= budget for c in planner.contexts)
    assert max(c.tokens for c in planner.contexts) > budget // 3  # it is really being filled
    assert report.stats.tokens.context_max <= budget
    last = planner.contexts[-1]
    assert len(last.findings) <= settings.max_findings_in_context
    assert last.findings[-1].iteration == 50  # the most recent findings are the ones kept
    assert len(last.last_result) <= settings.last_result_max_chars
    assert (tmp_path / "ws" / "out_50.txt").exists() and not Path("out_50.txt").exists()
    assert last.workspace_files[-1] == "(+20 more)" and len(last.workspace_files) == 31


def test_context_has_no_chat_history_only_state(segment_drop: tuple[Path, object], tmp_path: Path) -> None:
    data = segment_drop[0]
    settings = load_settings(runs_dir=tmp_path / "runs")
    state = new_run(
        Request(metric="revenue", data=str(data), objective="Why did revenue fall?"), data, settings, "x"
    )
    state = state.model_copy(
        update={
            "findings": [
                Finding(iteration=i, decision="ANALYZE", summary=f"finding {i}") for i in range(1, 30)
            ]
        }
    )
    ctx = build_context(state, settings, ["a.csv"])
    text = ctx.render()
    assert "Why did revenue fall?" in text
    assert "finding 29" in text and "finding 19" not in text  # only the last 10
    assert "| H1 | PENDING |" in text
    assert "a.csv" in text
    assert ctx.tokens <= settings.context_budget_tokens
