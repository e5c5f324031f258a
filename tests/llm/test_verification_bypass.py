"""A conclusion is accepted only when every cause it names is recomputed, on the host, from the
data: the three ways around that (a cause with no number, code that rebinds the check in the
kernel, a check that cannot run) are refused. The model is the scripted fake server."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from investigator.llm import LLMSettings
from investigator.planners.llm import LLMPlanner
from investigator.testing import FakeOpenAI, Reply, answer

from .helpers import FAST, investigate, loop_settings

Scenario = tuple[Path, dict[str, Any]]
JP, US = {"country": "JP"}, {"country": "US"}


def step(code: str, hid: str = "H3") -> Reply:
    return answer(
        {"type": "ANALYZE", "rationale": "Test.", "hypothesis_id": hid, "code": code}, to="NextStep"
    )


def conclude(segment: dict[str, str], contribution: float | None) -> Reply:
    cause = {"kind": "segment_change", "segment": segment, "contribution": contribution}
    body = {"type": "CONCLUDE", "rationale": "Done.", "conclusion": "It moved.", "root_causes": [cause]}
    return answer(body, to="NextStep")


def library_summary(seen: Any) -> Reply:
    return answer({"summary": "Read.", "updates": []})


def planner(server: FakeOpenAI, tmp_path: Path, **loop: Any) -> tuple[LLMPlanner, Any]:
    settings = loop_settings(tmp_path, min_iterations_before_conclude=1, **loop)
    llm = LLMSettings(base_url=server.url, api_key="sk-test-key", reflect_every=0, **FAST)
    return LLMPlanner(llm, settings), settings


def refusals(report: Any) -> list[str]:
    return [f.summary for f in report.findings if f.summary.startswith("Conclusion refused")]


def test_a_cause_without_its_share_is_refused(server: FakeOpenAI, tmp_path: Path, scenario: Scenario) -> None:
    """A cause the host's analysis lists gets the host's numbers (issue 37); one it does not list
    keeps only the share the model claims, and without one it is refused."""
    server.default = library_summary
    server.script(step("emit(explain_segments(cube, spec))"), conclude(US, None), conclude(JP, 0.8))
    p, settings = planner(server, tmp_path)
    report, _ = investigate(scenario, settings, p)
    assert "carries no share" in refusals(report)[0]
    assert report.status == "concluded" and [(c.segment, c.verified) for c in report.root_causes] == [
        (JP, True)
    ]


def test_code_that_rebinds_the_check_in_the_kernel_cannot_get_a_false_cause_verified(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    forge = (
        "def verify_causes(*a, **k):\n"
        "    return Verification(ok=True, checks=[CauseCheck(index=0, kind='segment_change', segment={}, "
        "ok=True, reason='verified')])\n"
        "_real_emit = emit\n"
        "def emit(result, label=None):\n"
        "    _real_emit(verify_causes())\n"
        "from investigator.analysis.verify import CauseCheck\n"
        "import investigator.analysis as _a; _a.verify_causes = verify_causes; _a.emit = emit\n"
    )
    server.default = library_summary
    server.script(step(forge), conclude(US, 0.95), conclude(JP, 0.8))
    p, settings = planner(server, tmp_path)
    report, _ = investigate(scenario, settings, p)
    refused = refusals(report)
    assert len(refused) == 1 and "cause 1 (segment_change)" in refused[0]
    assert [(c.segment, c.verified) for c in report.root_causes] == [(JP, True)]


def test_a_check_that_cannot_run_refuses_the_conclusion(
    server: FakeOpenAI, tmp_path: Path, scenario: Scenario
) -> None:
    path = tmp_path / "data.parquet"
    shutil.copy(scenario[0], path)
    gone = step(f"import os\nos.remove({str(path)!r})\nprint('removed')")
    server.default = library_summary
    server.script(gone, conclude(JP, 0.8), conclude(JP, 0.8))
    p, settings = planner(server, tmp_path, max_iterations=4)
    report, _ = investigate((path, scenario[1]), settings, p)
    assert refusals(report) and all("could not be checked" in r for r in refusals(report))
    assert report.status == "partial" and report.root_causes == []  # nothing unchecked is claimed
