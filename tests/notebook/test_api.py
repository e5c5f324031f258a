"""The Python API: `investigate` on a DataFrame and on a path, its `Investigation`, and going on."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from investigator import Investigation, investigate
from investigator.errors import DataError, UserError
from investigator.report.artifacts import write_artifacts
from investigator.sources.synth import generate

from .conftest import PLANTED


def test_dataframe_run_returns_the_report_as_attributes(planted_run: Investigation) -> None:
    inv = planted_run
    assert isinstance(inv, Investigation)
    assert inv.status == "concluded" and inv.metric == "revenue"
    assert inv.root_causes[0].kind == "segment_change" and inv.root_causes[0].segment == PLANTED
    assert inv.movement.change_pct is not None and inv.movement.change_pct < -0.03
    assert [h.id for h in inv.hypotheses] and inv.findings[0].decision == "SETUP"
    assert (inv.folder / "data.parquet").exists()  # the DataFrame was saved with the run


def test_exports_match_the_run_folder(planted_run: Investigation, tmp_path: Path) -> None:
    inv = planted_run
    saved = json.loads((inv.folder / "report.json").read_text())
    assert json.loads(inv.to_json()) == saved
    assert inv.to_markdown() == (inv.folder / "report.md").read_text()
    page = inv.to_html(tmp_path / "out" / "report.html")
    assert page.read_text().startswith("<!doctype html>") and inv.conclusion in page.read_text()
    assert (inv.folder / "report.html").exists() and (inv.folder / "investigation.ipynb").exists()
    assert Investigation.load(inv.run_id, inv.folder.parent).conclusion == inv.conclusion


def test_path_run_without_a_segment_cause(tmp_path: Path) -> None:
    frame, _ = generate("no_change", seed=5)
    path = tmp_path / "sales.csv"
    frame.to_csv(path, index=False)
    inv = investigate(str(path), metric="revenue", window="7d", dimensions="country,platform",
                      runs_dir=tmp_path / "runs", quiet=True)  # fmt: skip
    assert inv.metric == "revenue" and inv.status == "concluded"
    assert not any(c.segment for c in inv.root_causes), inv.root_causes
    state = json.loads((inv.folder / "state.json").read_text())
    assert state["request"]["data"] == str(path) and state["spec"]["dimensions"] == ["country", "platform"]
    page = (inv.folder / "report.html").read_text()
    assert 'id="chart-metric"' in page and 'id="chart-contributions"' in page  # charts without a cause


def test_continue_a_run_that_stopped_at_max_iterations(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=8, segment={"platform": "ios"}, factor=0.5)
    short = investigate(frame, metric="revenue", max_iterations=3, runs_dir=tmp_path, quiet=True)
    assert short.status == "partial" and "max_iterations" in (short.stop_reason or "")
    longer = short.continue_(iterations=8, progress=False)
    assert longer.run_id == short.run_id and longer.status == "concluded"
    assert longer.stats.iterations > short.stats.iterations
    assert longer.root_causes[0].segment == {"platform": "ios"}
    assert f"{short.stats.iterations} iterations in" in short._repr_html_()  # each shows its own report
    assert f"{longer.stats.iterations} iterations in" in longer._repr_html_()
    again = longer.resume(progress=False)  # a finished run resumes to the same report
    assert again.conclusion == longer.conclusion


def test_user_errors_say_what_to_do(tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=1)
    with pytest.raises(UserError, match="metric is required"):
        investigate(frame)
    with pytest.raises(UserError, match="baseline 'month'"):
        investigate(frame, metric="revenue", baseline="month")
    with pytest.raises(DataError, match="columns are"):
        investigate(frame, metric="profit", runs_dir=tmp_path, quiet=True)


def test_importing_the_package_stays_cheap() -> None:
    code = (
        "import sys, investigator; "
        "heavy = [m for m in ('IPython', 'pandas', 'ibis', 'matplotlib') if m in sys.modules]; "
        "assert not heavy, heavy; assert callable(investigator.load_ipython_extension)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_a_failing_artifact_warns_and_the_others_are_written(
    planted_run: Investigation, tmp_path: Path
) -> None:
    folder = tmp_path / planted_run.run_id
    folder.mkdir()
    (folder / "state.json").write_text((planted_run.folder / "state.json").read_text())
    (folder / "report.html").mkdir()  # a directory where the page should go: writing it fails
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        write_artifacts(planted_run.report, folder)
    assert any("report.html" in str(w.message) for w in caught)
    assert (folder / "investigation.ipynb").is_file()
