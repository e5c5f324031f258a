"""Requests refused before any work, in one line that says what to do (each was a traceback or a
half-made run folder)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from investigator import investigate
from investigator.errors import DataError
from tests.conftest import write_synth
from tests.docker_daemon import EmptyDaemon


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, cwd=cwd,
        env={**os.environ, "INVESTIGATOR_WARM": "0", **(env or {})},
    )  # fmt: skip


def test_a_dataframe_with_two_columns_of_one_name_is_refused_by_name(tmp_path: Path) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    frame = pd.read_parquet(path)
    frame = pd.concat([frame, frame[["country"]]], axis=1)  # was an AttributeError from deep in pandas
    with pytest.raises(DataError, match=r"more than one column named 'country': rename them") as e:
        investigate(frame, metric="revenue", runs_dir=tmp_path / "runs", quiet=True)
    assert "\n" not in str(e.value)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_missing_docker_image_is_refused_before_any_work(tmp_path: Path) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    sockets = Path(tempfile.mkdtemp(prefix="dk-"))  # short: a socket path has at most 107 bytes
    with EmptyDaemon(sockets / "docker.sock") as daemon:
        r = cli("--data", str(path), "--metric", "revenue", "--sandbox", "docker", "--runs-dir", "runs",
                cwd=tmp_path, env={"DOCKER_HOST": daemon.url})  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "the sandbox image investigator-sandbox:latest is not built: run `docker build" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # no half-made run


def test_a_triage_end_that_is_no_date_names_the_key(tmp_path: Path) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    (tmp_path / "triage.yaml").write_text(f"data: {path}\nmetrics: [revenue]\nend: 2026-02-30\n")
    r = cli("triage", "--config", "triage.yaml", "--dry-run", cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert "`end`" in r.stderr and "2026-02-30" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
