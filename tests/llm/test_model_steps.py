"""What the model did, said on every screen: the steps it decided, re-asked and left to the offline
fallback, in report.json, the terminal and the HTML report, with a warning when most fell back.
Against a fake server that behaves like llama.cpp with a small model that rambles past its cap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from investigator.llm import LLMSettings
from investigator.planners.llm import LLMPlanner
from investigator.report.model import ModelSteps
from investigator.testing import LLAMA_CPP_REFUSAL, FakeOpenAI, Reply, Seen, answer, malformed

from ..conftest import write_synth
from .helpers import FAST, investigate, loop_settings
from .test_cli_llm import cli
from .test_investigation import QUALITY, SEGMENTS

RAMBLING = {"type": "ANALYZE", "rationale": "Let me think. " * 1000}  # cut at any cap


def rambles(seen: Seen) -> Reply:
    return answer(RAMBLING)


def test_the_report_counts_decided_reasked_and_fallback_steps(
    tmp_path: Path, scenario: tuple[Path, dict[str, Any]]
) -> None:
    with FakeOpenAI(llama_cpp=True, default=rambles) as server:
        server.script(QUALITY, malformed(to="NextStep"), SEGMENTS)
        llm = LLMSettings(base_url=server.url, max_validation_retries=1, reflect_every=0, **FAST)
        settings = loop_settings(tmp_path)
        report, folder = investigate(scenario, settings, LLMPlanner(llm, settings, on_note=lambda line: None))
    model = report.stats.model
    assert model is not None and (model.decided, model.reasked) == (2, 1)
    assert model.fell_back >= 1 and model.steps == model.decided + model.fell_back
    offline = [f for f in report.findings if "step chosen offline" in f.summary]
    cut = [f for f in offline if "the model's answer was cut off at 600 tokens" in f.summary]
    # each fallback says why: the answer was cut off, or (after repeated ones) the rest is planned offline
    rest = [f for f in offline if "the rest of this run is planned offline" in f.summary]
    assert cut and len(cut) + len(rest) == len(offline), [f.summary[:90] for f in offline]
    assert not any("EOF while parsing" in f.summary for f in report.findings)  # what it used to say
    saved = json.loads((folder / "report.json").read_text())
    assert saved["stats"]["model"] == {"decided": 2, "reasked": 1, "fell_back": model.fell_back}


def test_a_model_that_never_follows_the_format_is_named_on_every_screen(tmp_path: Path) -> None:
    data, _ = write_synth(tmp_path, "segment_change", seed=8, segment={"country": "FR"}, factor=0.5)
    out = tmp_path / "r.json"
    with FakeOpenAI(llama_cpp=True, default=rambles) as server:
        r = cli(
            ["--data", str(data), "--metric", "revenue", "--planner", "llm", "--model", "SmolLM2-135M",
             "--json", str(out), "--runs-dir", str(tmp_path / "runs"), "--sandbox", "local"],
            {"OPENAI_BASE_URL": server.url, "INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES": "1"},
        )  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    model = ModelSteps.model_validate(report["stats"]["model"])
    assert model.decided == 0 and model.fell_back == model.steps > 0
    screen = " ".join((r.stdout + r.stderr).split())  # rich wraps long lines
    assert (
        f"the model decided 0 of {model.steps} steps (0 after a re-ask), {model.fell_back} fell back"
        in screen
    )
    assert "this model could not follow the format: try a larger model or --planner offline" in screen
    assert r.stderr.count(LLAMA_CPP_REFUSAL) == 1  # the server's reason, once: then it is known
    assert r.stderr.count("structured output at 127.0.0.1") == 1 and "json_object_schema" in r.stderr
    html = (tmp_path / "runs" / report["run_id"] / "report.html").read_text()
    assert f"the model decided 0 of {model.steps} steps" in html and "could not follow the format" in html


def test_the_warning_is_for_a_model_that_mostly_fell_back() -> None:
    assert ModelSteps(decided=5, reasked=2, fell_back=2).warning() is None
    assert ModelSteps(decided=3, fell_back=3).warning() is None
    assert "try a larger model" in (ModelSteps(decided=1, fell_back=6).warning() or "")


def test_a_model_that_failed_two_steps_in_a_row_is_not_asked_again(
    tmp_path: Path, scenario: tuple[Path, dict[str, Any]]
) -> None:
    """On a small local model each failed step costs a minute: after `give_up_after` in a row the
    run goes on offline, says so once, and counts every such step as fallen back."""
    notes: list[str] = []
    with FakeOpenAI(llama_cpp=True, default=rambles) as server:
        llm = LLMSettings(base_url=server.url, reflect_every=0, give_up_after=2, **FAST)
        settings = loop_settings(tmp_path)
        report, _ = investigate(scenario, settings, LLMPlanner(llm, settings, on_note=notes.append))
        decides = [r for r in server.requests if r.name == "NextStep"]
        summaries = [r for r in server.requests if r.name == "StepFinding"]
    model = report.stats.model
    assert model is not None and model.steps >= 4  # the run went on past the two the model failed
    assert len(decides) == 1 + 2  # the mode probe llama.cpp refuses, then one cut-off answer a step
    assert (model.decided, model.fell_back) == (0, model.steps)
    assert len(summaries) <= 2  # nor for the later steps' summaries
    assert any("planned offline without asking the model" in f.summary for f in report.findings)
    assert [n for n in notes if "could not decide 2 steps in a row" in n] == [notes[-1]]


def test_a_model_that_fails_now_and_then_is_still_asked(
    tmp_path: Path, scenario: tuple[Path, dict[str, Any]]
) -> None:
    with FakeOpenAI(llama_cpp=True, default=rambles) as server:
        server.script(QUALITY, malformed(to="NextStep"), SEGMENTS)  # fails one, then decides
        llm = LLMSettings(
            base_url=server.url, max_validation_retries=0, reflect_every=0, give_up_after=2, **FAST
        )
        settings = loop_settings(tmp_path)
        report, _ = investigate(scenario, settings, LLMPlanner(llm, settings, on_note=lambda line: None))
    model = report.stats.model
    assert model is not None and model.decided == 2
