"""Problems the runner can see before any work starts are refused at once, in one line, exit 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from investigator.config import Settings
from investigator.errors import ConfigError
from investigator.preflight import check_runs_dir
from investigator.request import Request
from investigator.runner import investigate


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    code = "from investigator.front.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
    )


def test_a_runs_dir_that_is_a_file_is_refused_before_any_work(
    settings: Settings, segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    path, _ = segment_drop
    blocker = tmp_path / "runs-file"
    blocker.write_text("not a folder")
    with pytest.raises(ConfigError, match="is a file"):
        investigate(
            Request(metric="revenue", data=str(path)), settings.model_copy(update={"runs_dir": blocker})
        )
    done = _cli("--metric", "revenue", "--data", str(path), "--runs-dir", str(blocker / "runs"))
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "--runs-dir" in done.stderr


@pytest.mark.skipif(not Path("/sys/kernel").is_dir(), reason="needs sysfs")
def test_a_read_only_runs_dir_is_refused() -> None:
    with pytest.raises(ConfigError, match="cannot be written"):
        check_runs_dir(Path("/sys/investigator-runs"))  # sysfs refuses new folders, even to root


def test_docker_sandbox_without_a_daemon_exits_2_with_one_line(
    segment_drop: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    path, _ = segment_drop
    closed = tmp_path / "docker.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(closed))
    server.close()  # a socket file nobody listens on
    done = _cli(
        "--metric", "revenue", "--data", str(path), "--sandbox", "docker",
        "--runs-dir", str(tmp_path / "runs"),
        env={"DOCKER_HOST": f"unix://{closed}"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert "no Docker daemon answers" in lines[0] and "--sandbox local" in lines[0]
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # nothing started


def test_runs_started_in_threads_check_the_runs_folder_at_once(tmp_path: Path) -> None:
    """Triage starts runs in worker threads of one process: their checks must not trip each other."""
    from concurrent.futures import ThreadPoolExecutor

    def check(_: int) -> None:
        for _ in range(200):
            check_runs_dir(tmp_path / "runs")

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(check, range(8)))  # raises if any check failed
    assert list((tmp_path / "runs").iterdir()) == []
