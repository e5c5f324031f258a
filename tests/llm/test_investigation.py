"""Whole investigations driven by a scripted LLM over HTTP, on a real kernel and real files."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from investigator.llm import LLMSettings
from investigator.planners.llm import FALLBACK, LLMPlanner
from investigator.run.state import load
from investigator.testing import FakeOpenAI, Reply, Seen, answer, fault

from .helpers import FAST, investigate, loop_settings

Scenario = tuple[Path, dict[str, Any]]
JP = {"country": "JP"}


def step(kind: str, hid: str, code: str, why: str = "Test it.") -> Reply:
    return answer({"type": kind, "rationale": why, "hypothesis_id": hid, "code": code}, to="NextStep")


def conclude(*segments: dict[str, str], contribution: float | None = 0.8) -> Reply:
    """A CONCLUDE naming `segments`; JP's true share of the change in this scenario is 0.78."""
    causes = [{"kind": "segment_change", "segment": s, "contribution": contribution} for s in segments]
    body = {
        "type": "CONCLUDE",
        "rationale": "Localized.",
        "conclusion": "Revenue moved in JP.",
        "confidence": "high",
    }
    return answer({**body, "root_causes": causes}, to="NextStep")


QUALITY = step("ANALYZE", "H1", "emit(quality_checks(table, spec, daily))")
SEGMENTS = step("ANALYZE", "H3", "emit(explain_segments(cube, spec))")
DRILL = step("DRILL_DOWN", "H3", "emit(drill_down(cube, spec, {'country': 'JP'}))")


def echo_library(seen: Seen) -> Reply:
    """A compress answer that restates the library's summary, so the finding shows who wrote it."""
    if seen.name != "StepFinding":
        return fault(400, f"unscripted {seen.name}")
    summary = re.search(r"# Library summary\n(.*?)\n\n# Library's", seen.text, re.S)
    return answer({"summary": f"LLM read: {summary.group(1) if summary else '?'}"[:800], "updates": []})


def test_a_scripted_llm_finds_the_planted_cause(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    server.default = echo_library
    reflection = {"assessment": "Segments explain it.", "reranked": ["H3", "H1", "H2", "H4"], "blockers": []}
    server.script(QUALITY, SEGMENTS, answer(reflection, to="Reflection"), DRILL, conclude(JP))
    settings = loop_settings(tmp_path, min_iterations_before_conclude=2)
    planner = LLMPlanner(_llm(server, reflect_every=2), settings)
    report, folder = investigate(scenario, settings, planner)

    assert report.status == "concluded" and report.stats.planner == "llm"
    assert [(c.kind, c.segment, c.verified) for c in report.root_causes] == [("segment_change", JP, True)]
    assert [f.decision for f in report.findings] == ["SETUP", "ANALYZE", "ANALYZE", "DRILL_DOWN", "CONCLUDE"]
    # the library's typed result is the record, the model's words its commentary
    assert all(f.summary.startswith("LLM read: ") is False for f in report.findings[1:4])
    assert all("(Model's reading: LLM read: " in f.summary for f in report.findings[1:4])
    assert report.hypotheses[0].id == "H3"  # the reflection's ranking
    tokens = json.loads(report.model_dump_json())["stats"]["tokens"]  # as report.json holds them
    assert {"decide_in", "decide_out", "compress_in", "compress_out", "reflect_in", "reflect_out"} <= set(
        tokens
    )
    assert tokens["total"] == sum(v for k, v in tokens.items() if k not in ("total", "context_max"))
    assert tokens["total"] == report.stats.tokens.total and tokens["context_max"] > 0
    assert '"country": "JP"' in (folder / "outputs" / "iter_002.txt").read_text()  # the code ran
    assert server.pending == []


def test_code_that_does_nothing_is_re_asked_and_does_not_use_a_step(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    """`.369847,` compiles and ran, using up an iteration: it is now a validation error the model
    is re-asked with, inside the same step."""
    server.default = echo_library
    server.script(step("ANALYZE", "H1", ".369847,"), QUALITY, SEGMENTS, DRILL, conclude(JP))
    settings = loop_settings(tmp_path, min_iterations_before_conclude=2)
    report, folder = investigate(scenario, settings, LLMPlanner(_llm(server, reflect_every=0), settings))
    assert report.status == "concluded"
    assert [f.decision for f in report.findings] == ["SETUP", "ANALYZE", "ANALYZE", "DRILL_DOWN", "CONCLUDE"]
    asks = server.calls("NextStep")
    assert len(asks) == 5 and "the code does nothing" in asks[1].text  # the re-ask, with its reason
    assert "369847" not in "".join(p.read_text() for p in (folder / "outputs").glob("*.txt"))


def test_an_unverifiable_conclusion_is_refused_and_the_failure_becomes_a_finding(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    server.default = echo_library
    server.script(QUALITY, SEGMENTS, conclude({"country": "Atlantis"}, contribution=0.9), conclude(JP))
    settings = loop_settings(tmp_path, min_iterations_before_conclude=2)
    report, _ = investigate(scenario, settings, LLMPlanner(_llm(server), settings))

    refused = report.findings[3]
    assert refused.decision == "CONCLUDE" and refused.summary.startswith(
        "Conclusion refused, verification failed"
    )
    assert "country=Atlantis does not occur" in refused.summary
    assert "Conclusion refused" in server.calls("NextStep")[-1].text  # the notice reached the next prompt
    assert report.status == "concluded"
    assert [(c.segment, c.verified) for c in report.root_causes] == [(JP, True)]


def test_a_partial_conclusion_lists_only_causes_that_hold(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    server.default = echo_library
    claim = conclude({"country": "Atlantis"}, JP)
    server.script(QUALITY, SEGMENTS, claim, claim)
    settings = loop_settings(tmp_path, min_iterations_before_conclude=2, max_iterations=3)
    report, _ = investigate(scenario, settings, LLMPlanner(_llm(server), settings))

    assert report.status == "partial" and "max_iterations" in (report.stop_reason or "")
    # the model's last claim names Atlantis, which fails its check: the partial conclusion falls back
    # to what the evidence gathered supports, every cause of it verified
    assert [(c.segment, c.verified) for c in report.root_causes] == [(JP, True)]
    assert "Atlantis" not in report.conclusion
    assert "You must CONCLUDE now" in server.calls("NextStep")[-1].text


def test_an_llm_that_never_validates_falls_back_to_offline_and_says_so(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    server.default = lambda seen: answer({"nonsense": True})
    settings = loop_settings(tmp_path)
    report, _ = investigate(scenario, settings, LLMPlanner(_llm(server, max_validation_retries=0), settings))

    assert [(c.kind, c.segment) for c in report.root_causes][:1] == [("segment_change", JP)]
    steps = [f for f in report.findings if f.decision not in ("SETUP", "CONCLUDE")]
    assert steps and all(f.summary.startswith(FALLBACK) for f in steps)
    assert report.stats.tokens.decide_in > 0  # the failed answers still cost tokens


def test_the_token_budget_concludes_gracefully(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    server.default = lambda seen: answer({"summary": "Read.", "updates": []}, usage=(1000, 0))
    server.script(*[Reply(body=r.body, to=r.to, usage=(1000, 0)) for r in (QUALITY, SEGMENTS, DRILL)])
    settings = loop_settings(tmp_path, max_tokens_per_run=2500)
    report, _ = investigate(scenario, settings, LLMPlanner(_llm(server), settings))

    # decide (1000) + compress (1000) + decide (1000) crosses 2500: no call after that
    assert [r.name for r in server.requests] == ["NextStep", "StepFinding", "NextStep"]
    assert report.stats.tokens.total == 3000
    assert report.status == "partial" and "token budget" in (report.stop_reason or "")
    assert report.root_causes  # the offline planner concluded from the evidence
    assert report.findings[2].summary.startswith(
        f"{FALLBACK}: library summary used (the token budget is used)]"
    )


def test_a_rate_limit_mid_run_waits_with_the_state_already_on_disk(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    server.default = echo_library
    server.script(QUALITY, fault(429, retry_after_ms=10, to="NextStep"), SEGMENTS, DRILL, conclude(JP))
    settings = loop_settings(tmp_path, min_iterations_before_conclude=2)
    on_disk: list[int] = []

    def on_wait(seconds: float, reason: str) -> None:
        (folder,) = (tmp_path / "runs").iterdir()
        on_disk.append(load(folder).iteration)

    report, _ = investigate(scenario, settings, LLMPlanner(_llm(server), settings, on_wait=on_wait))
    assert on_disk == [1]  # the wait before decision 2 found iteration 1 checkpointed
    assert report.status == "concluded"


def test_the_api_key_never_reaches_the_kernel_the_run_folder_or_the_logs(
    server: FakeOpenAI,
    tmp_path: Path,
    scenario: Scenario,
    monkeypatch: pytest.MonkeyPatch,
    caplog: Any,
    capfd: Any,
) -> None:
    canary = "sk-secret-canary-4f9d2c"
    monkeypatch.setenv("OPENAI_API_KEY", canary)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    caplog.set_level(logging.DEBUG)
    server.default = echo_library
    spy = "import os\nprint(sorted(os.environ.items()))\nemit(quality_checks(table, spec, daily))"
    server.script(step("ANALYZE", "H1", spy), SEGMENTS, conclude(JP))
    settings = loop_settings(tmp_path, min_iterations_before_conclude=2)
    report, folder = investigate(scenario, settings, LLMPlanner(LLMSettings(), settings))

    assert server.requests[0].headers["authorization"] == f"Bearer {canary}"  # it was used...
    kernel_env = (folder / "outputs" / "iter_001.txt").read_text()
    assert "PATH" in kernel_env and canary not in kernel_env  # ...but the kernel never had it
    for path in folder.rglob("*"):
        if path.is_file():
            assert canary.encode() not in path.read_bytes(), path
    assert canary not in report.model_dump_json()
    assert canary not in caplog.text
    out, err = capfd.readouterr()
    assert canary not in out + err
    assert all(canary not in r.text for r in server.requests)  # nor in any prompt


def _llm(server: FakeOpenAI, **overrides: Any) -> LLMSettings:
    return LLMSettings(**{"base_url": server.url, "api_key": "sk-test-key", **FAST, **overrides})
