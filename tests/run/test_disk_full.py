"""A run folder that cannot take more (a full disk, a file over the size limit): one line, the last
checkpoint intact, and never exit 0 when a file people open was not written. RLIMIT_FSIZE stands in
for the full disk: a write past it fails with EFBIG, as a full one fails with ENOSPC."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from investigator.run.state import RunState

from ..conftest import write_synth


def cli(*args: str, cwd: Path, max_file_bytes: int | None = None) -> subprocess.CompletedProcess[str]:
    def limit() -> None:
        if max_file_bytes is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (max_file_bytes, max_file_bytes))

    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd, preexec_fn=limit,
        env={**os.environ, "INVESTIGATOR_WARM": "0", "INVESTIGATOR_HOME": str(cwd / "home")},
    )  # fmt: skip


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, _ = write_synth(
        tmp_path_factory.mktemp("d"), "segment_change", seed=11, segment={"country": "DE"}, factor=0.5
    )
    return path


@pytest.mark.long
def test_a_checkpoint_that_cannot_be_written_is_one_line_and_the_run_resumes(
    data: Path, tmp_path: Path
) -> None:
    r = cli(
        "--data", str(data), "--metric", "revenue", "--runs-dir", "runs", cwd=tmp_path, max_file_bytes=12_000
    )
    assert r.returncode == 1, r.stderr[-3000:]
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr[-3000:]
    (folder,) = (tmp_path / "runs").iterdir()
    assert "File too large" in r.stderr and f"investigate resume {folder.name}" in r.stderr
    state = RunState.model_validate(json.loads((folder / "state.json").read_text()))  # whole, not half
    assert state.iteration > 0 and f"iteration {state.iteration}" in r.stderr
    assert not list(folder.glob(".*.tmp"))

    again = cli("resume", folder.name, "--runs-dir", "runs", "--quiet", cwd=tmp_path)
    assert again.returncode == 0, again.stderr[-3000:]
    assert (folder / "report.html").is_file() and "country=DE" in again.stdout


def test_a_report_html_that_cannot_be_written_is_said_and_not_a_success(data: Path, tmp_path: Path) -> None:
    r = cli(
        "--data", str(data), "--metric", "revenue", "--runs-dir", "runs", cwd=tmp_path, max_file_bytes=100_000
    )
    (folder,) = (tmp_path / "runs").iterdir()
    assert r.returncode == 1, r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "RuntimeWarning" not in r.stderr
    assert "report.html could not be written" in r.stderr and f"investigate resume {folder.name}" in r.stderr
    assert "country=DE" in r.stdout  # the answer is still shown, and kept
    assert (folder / "report.json").is_file() and not (folder / "report.html").exists()
