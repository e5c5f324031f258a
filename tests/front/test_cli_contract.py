"""What scripts and schedulers rely on: the version, JSON on standard output, an exit code that
tells a finished run from one cut short, and `resume --more` that continues it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from investigator import __version__
from investigator.sources.synth import generate

from ..conftest import cli, write_synth


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


SPY_ON_LOOPS = """
import asyncio, os, sys
_del = asyncio.BaseEventLoop.__del__
def _spy(self, *a):
    if not self.is_closed():
        sys.stderr.write(f"unclosed event loop collected in {os.path.basename(sys.argv[0])}\\n")
    _del(self, *a)
asyncio.BaseEventLoop.__del__ = _spy
"""


def test_no_event_loop_is_left_for_the_collector(data: Path, tmp_path: Path) -> None:
    """An unclosed loop collected late prints a traceback into the user's terminal (seen in CI under
    load); the spy reports every one, in the CLI and in the sandbox server it starts, deterministically."""
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(SPY_ON_LOOPS)
    path = os.pathsep.join(p for p in (str(spy), os.environ.get("PYTHONPATH")) if p)
    r = cli(
        "--data", str(data), "--metric", "revenue", "--dimensions", "nope", "--runs-dir", str(tmp_path / "r"),
        env={"PYTHONPATH": path},
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "unclosed event loop" not in r.stderr, r.stderr


def test_quiet_is_quiet_with_a_label_the_font_cannot_draw(tmp_path: Path) -> None:
    """A CJK segment name makes matplotlib warn about missing glyphs: that goes to the run's log."""
    frame, _ = generate("segment_change", seed=8, segment={"channel": "social"}, factor=0.4)
    frame["channel"] = frame["channel"].replace("social", "社交媒体")
    path = tmp_path / "cjk.parquet"
    frame.to_parquet(path, index=False)
    runs = tmp_path / "runs"
    r = cli(
        "--data",
        str(path),
        "--metric",
        "revenue",
        "--dimensions",
        "channel",
        "--quiet",
        "--runs-dir",
        str(runs),
    )
    assert r.returncode == 0, r.stderr
    assert "社交媒体" in r.stdout and "Warning" not in r.stderr and "Glyph" not in r.stderr, r.stderr
    (folder,) = runs.iterdir()
    assert "missing from font" in (folder / "artifacts.log").read_text()


@pytest.mark.long
def test_resume_on_changed_data_is_refused_and_force_runs_it_again(tmp_path: Path) -> None:
    data = write_synth(tmp_path, "segment_change", seed=6, segment={"channel": "email"}, factor=0.4)[0]
    runs = tmp_path / "runs"
    r = cli("--data", str(data), "--metric", "revenue", "--max-iterations", "2", "--runs-dir", str(runs))
    assert r.returncode == 3, r.stderr
    (folder,) = runs.iterdir()
    write_synth(tmp_path, "segment_change", seed=6, segment={"channel": "social"}, factor=0.4)  # same path
    r = cli("resume", folder.name, "--more", "8", "--runs-dir", str(runs))
    assert r.returncode == 2 and "changed since run" in r.stderr and "Traceback" not in r.stderr, r.stderr
    out = tmp_path / "forced.json"
    r = cli("resume", folder.name, "--more", "8", "--force", "--runs-dir", str(runs), "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["root_causes"][0]["segment"] == {"channel": "social"}  # the new data's


def test_a_second_resume_of_a_running_run_is_refused(data: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    r = cli("--data", str(data), "--metric", "revenue", "--max-iterations", "2", "--runs-dir", str(runs))
    (folder,) = runs.iterdir()
    from investigator.run.guard import run_lock

    with run_lock(folder, folder.name):  # as a resume in another process holds it
        r = cli("resume", folder.name, "--more", "5", "--runs-dir", str(runs))
    assert r.returncode == 2 and f"run {folder.name} is in progress" in r.stderr, r.stderr
