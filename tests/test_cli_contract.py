"""What scripts and schedulers rely on: the version, JSON on standard output, an exit code that
tells a finished run from one cut short, and `resume --more` that continues it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from investigator import __version__

from .conftest import write_synth
from .test_cli import cli


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("contract")
    return write_synth(folder, "segment_change", seed=5, segment={"channel": "social"}, factor=0.5)[0]


def test_version() -> None:
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"investigate {__version__}"


def test_json_dash_writes_only_the_report_to_stdout(data: Path, tmp_path: Path) -> None:
    r = cli("--data", str(data), "--metric", "revenue", "--json", "-", "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)  # nothing but the JSON on stdout
    assert report["root_causes"][0]["segment"] == {"channel": "social"}
    assert not (tmp_path / "-").exists() and not Path("-").exists()


def test_a_run_cut_short_exits_3_and_resume_more_finishes_it(data: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    r = cli("--data", str(data), "--metric", "revenue", "--max-iterations", "2", "--runs-dir", str(runs))
    assert r.returncode == 3, r.stderr
    (folder,) = runs.iterdir()
    assert f"investigate resume {folder.name} --more 5" in " ".join(r.stderr.split())
    out = tmp_path / "done.json"
    r = cli("resume", folder.name, "--more", "8", "--runs-dir", str(runs), "--json", str(out), "--quiet")
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    assert report["status"] == "concluded" and report["stats"]["iterations"] > 2
    assert report["root_causes"][0]["segment"] == {"channel": "social"}


def test_markup_in_a_message_is_printed_as_text(data: Path, tmp_path: Path) -> None:
    odd = "[/]region[bold red]"
    r = cli(
        "--data", str(data), "--metric", "revenue", "--dimensions", odd, "--runs-dir", str(tmp_path / "r")
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"dimension(s) '{odd}' not found" in r.stderr
