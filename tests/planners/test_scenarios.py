"""Planted causes are found: the shared scenarios (one through the CLI, all through its wiring in one
process), and generated variations."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from investigator.config import load_settings
from investigator.front.flags import ask
from investigator.kernels.inprocess import InProcessKernel
from investigator.kernels.pool import POOL
from investigator.planners.offline import OfflinePlanner
from investigator.request import Request
from investigator.runner import investigate, run_loop
from investigator.runs import new_run
from investigator.sources.synth import CAUSES

from ..conftest import write_synth

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from scenarios import cause_found, run_scenario

OTHER_NAMES = {
    "region": ["north", "south", "east", "west", "central", "islands"],
    "device": ["desktop", "tablet", "phone", "tv"],
    "source": ["seo", "sem", "display", "referral", "push", "partner", "direct"],
    "product": ["basic", "plus", "pro", "team", "enterprise"],
}


def shared_scenarios(shared: Path) -> list[Path]:
    folders = sorted(p for p in (shared / "scenarios").iterdir() if (p / "truth.json").exists())
    assert len(folders) == 13
    return folders


def test_a_shared_scenario_is_found_through_the_cli(shared: Path) -> None:
    """The command line's path (flags, exit code, `--json`) on one scenario with two planted causes;
    all thirteen are scored below through the same flags in one process."""
    result = run_scenario(shared / "scenarios" / "two_causes")
    assert result["found"], (result.get("reported"), result.get("error"))


def scenario_in_process(folder: Path, runs: Path) -> dict[str, Any]:
    """`run_scenario`'s command line, through the front doors' one wiring (`flags.ask`) and the
    runner in this process, on the local sandbox kernel the CLI uses (kept between runs and reset
    for each, as the notebook and triage run many: only its start is saved)."""
    truth = json.loads((folder / "truth.json").read_text())
    asked = ask(
        metric=truth["metric"], data=str(folder / truth["data"]), window=truth["window"], end=truth["end"],
        time_column=truth["time_column"], dimensions=",".join(truth["dimensions"]), planner="offline",
        runs_dir=runs, flag="--",
    )  # fmt: skip
    report = investigate(asked.request, asked.settings, llm=asked.llm, reuse_kernel=True)
    causes = [c.model_dump(mode="json") for c in report.root_causes]
    return {
        "scenario": folder.name,
        "found": all(cause_found(t, causes) for t in truth["causes"]),
        "reported": [{k: c.get(k) for k in ("kind", "segment", "detail")} for c in causes[:3]],
    }


@pytest.fixture
def kernel_pool() -> Iterator[None]:
    POOL.close()
    yield
    POOL.close()  # no idle kernel left in this worker


@pytest.mark.long
def test_all_shared_scenarios_are_found(shared: Path, tmp_path: Path, kernel_pool: None) -> None:
    results = [scenario_in_process(f, tmp_path / "runs") for f in shared_scenarios(shared)]
    missed = [(r["scenario"], r["reported"]) for r in results if not r["found"]]
    print(json.dumps({"found": len(results) - len(missed), "total": len(results)}))
    assert not missed, missed


def investigate_synth(
    tmp_path: Path, cause: str, **kw: object
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    path, truth = write_synth(tmp_path, cause, **kw)
    settings = load_settings(runs_dir=tmp_path / "runs")
    request = Request(metric=truth["metric"], data=str(path), dimensions=truth["dimensions"])
    state = new_run(request, path, settings, planner="offline")
    report = run_loop(state, settings, OfflinePlanner(), InProcessKernel())
    return truth, [c.model_dump() for c in report.root_causes]


@pytest.mark.parametrize("seed", [21, 22])
@pytest.mark.parametrize("cause", CAUSES)
def test_generated_variations_are_found(tmp_path: Path, cause: str, seed: int) -> None:
    """Other dimension names, values, sizes and seeds than the shared files."""
    truth, causes = investigate_synth(tmp_path, cause, seed=seed, dims=OTHER_NAMES, scale=0.5 + seed % 3)
    for t in truth["causes"]:
        assert cause_found(t, causes), (truth["causes"], causes[:3])


@pytest.mark.parametrize("seed", [5, 6])
def test_ratio_metric_within_noise_is_no_change_not_a_rate_change(tmp_path: Path, seed: int) -> None:
    """Regression: the mix/rate split of an insignificant ratio move was reported as a rate change."""
    path, _ = write_synth(tmp_path, "no_change", seed=seed)
    settings = load_settings(runs_dir=tmp_path / "runs")
    request = Request(metric="orders/sessions", data=str(path))
    state = new_run(request, path, settings, planner="offline")
    report = run_loop(state, settings, OfflinePlanner(), InProcessKernel())
    assert [c.kind for c in report.root_causes] == ["no_change"]


def test_text_in_the_data_stays_data_through_generated_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment value written as code: it reaches the drill-down and verification code as a
    literal, runs nothing, and comes back verbatim as the cause."""
    hostile = "x'); open('PWNED', 'w'); ('"
    dims = {**OTHER_NAMES, "region": [hostile, *OTHER_NAMES["region"][1:]]}
    monkeypatch.chdir(tmp_path)
    _, causes = investigate_synth(
        tmp_path, "segment_change", seed=2, dims=dims, segment={"region": hostile}, factor=0.4
    )
    assert causes[0]["segment"] == {"region": hostile}
    assert causes[0]["verified"] is True
    assert not list(tmp_path.rglob("PWNED"))
