"""Regression (issue 37, item 6): interrupts at the edges said the wrong thing. SIGTERM while the
reports were written said "interrupted before the run started; nothing was saved" although the run
was saved, concluded; a run killed while it started left a folder that `resume` called "no run";
SIGTERM in the warm client's first second ended it with 143 and no word. Each now says what was
saved and the command that continues it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from investigator.config import load_settings
from investigator.errors import ConfigError, Interrupted
from investigator.factories import Hooks
from investigator.kernels.inprocess import InProcessKernel
from investigator.planners.offline import OfflinePlanner
from investigator.request import Request
from investigator.runner import _run
from investigator.runs import load_run, new_run
from tests.conftest import write_synth


class StoppedAtTheEnd(InProcessKernel):
    """A kernel whose shutdown, after the loop concluded, is where the stop signal lands."""

    def shutdown(self) -> None:
        super().shutdown()
        raise KeyboardInterrupt


def test_an_interrupt_while_the_reports_are_written_says_the_run_is_saved(tmp_path: Path) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    settings = load_settings(runs_dir=tmp_path / "runs", sandbox="inprocess")
    request = Request(metric="revenue", data=str(path))
    state = new_run(request, str(path), settings, "offline")
    with pytest.raises(Interrupted) as caught:
        _run(state, settings, Hooks(), kernel=StoppedAtTheEnd(), planner=OfflinePlanner())
    assert caught.value.resumable and caught.value.reports_only and caught.value.run_id == state.run_id
    saved = json.loads((tmp_path / "runs" / state.run_id / "state.json").read_text())
    assert saved["status"] == "concluded"


def test_a_run_killed_while_it_started_is_named_with_what_to_do(tmp_path: Path) -> None:
    settings = load_settings(runs_dir=tmp_path / "runs")
    (tmp_path / "runs" / "20260101-000000-abcdef" / "workspace").mkdir(parents=True)
    with pytest.raises(ConfigError) as caught:
        load_run("20260101-000000-abcdef", settings)
    assert "saved nothing to continue from" in str(
        caught.value
    ) and "run the same investigate command" in str(caught.value)


def test_a_stop_signal_in_the_warm_clients_first_second_is_said(tmp_path: Path) -> None:
    """The warm client (`INVESTIGATOR_WARM=1`, no helper up): SIGTERM as soon as the process catches
    it, long before the command's own handlers exist."""
    where = tmp_path / "warm"
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_WARM")}
    env |= {"INVESTIGATOR_WARM": "1", "INVESTIGATOR_WARM_DIR": str(where)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "investigator", "--metric", "revenue", "--runs-dir", str(tmp_path / "runs")],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    term = 1 << (signal.SIGTERM - 1)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and proc.poll() is None:
        status = Path(f"/proc/{proc.pid}/status").read_text()
        caught = int(next(line for line in status.splitlines() if line.startswith("SigCgt:")).split()[1], 16)
        if caught & term:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted before the run started; nothing was saved: run the same command again" in err
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
