"""`stats` tell the whole wall time of a run, and where it went."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from investigator.config import Settings
from investigator.report.model import Report, Stats
from investigator.request import Request
from investigator.runner import investigate


def test_stats_total_is_the_wall_time_and_the_phases_add_up_to_it(
    settings: Settings, segment_drop: tuple[Path, dict[str, Any]]
) -> None:
    path, _ = segment_drop
    settings = settings.model_copy(update={"sandbox": "local"})
    started = time.monotonic()
    report = investigate(Request(metric="revenue", data=str(path)), settings)
    wall = time.monotonic() - started
    s = report.stats
    p = s.phases
    assert abs(p.start_s + p.data_s + p.loop_s + p.artifacts_s - s.elapsed_s) < 0.005
    assert s.elapsed_s >= wall - 0.25, (s.elapsed_s, wall)  # only the last rewrite of report.json is left out
    assert min(p.start_s, p.data_s, p.loop_s, p.artifacts_s) > 0  # each phase was timed
    saved = Report.model_validate_json((settings.runs_dir / report.run_id / "report.json").read_text())
    assert saved.stats == s  # the file says what the caller was told, artifacts included
    assert f"{s.elapsed_s:.1f}s" in (settings.runs_dir / report.run_id / "report.md").read_text()


def test_a_report_written_before_phases_existed_still_loads() -> None:
    stats = Stats.model_validate({"iterations": 7, "elapsed_s": 0.6, "planner": "offline", "tokens": {}})
    assert stats.elapsed_s == 0.6 and stats.phases.loop_s == 0 and stats.earlier_s == 0


def test_the_command_line_counts_its_own_start(
    tmp_path: Path, segment_drop: tuple[Path, dict[str, Any]]
) -> None:
    """From the command line most of a small run's time is the program's start (imports): the
    total it reports is the wall time the person waited, not the part after the imports."""
    path, _ = segment_drop
    env = {**os.environ, "INVESTIGATOR_WARM": "0"}
    command = [str(Path(sys.executable).parent / "investigate"), "--data", str(path), "--metric", "revenue"]
    started = time.monotonic()
    done = subprocess.run(
        [*command, "--runs-dir", str(tmp_path / "runs"), "--json", str(tmp_path / "r.json"), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    wall = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    stats = Report.model_validate_json((tmp_path / "r.json").read_text()).stats
    # left out: the interpreter's own start and, after the report, its exit (longer on a loaded
    # machine, hence relative); without the imports, a third or more of the wall would be missing
    assert 0.85 * wall - 0.3 <= stats.elapsed_s <= wall, (stats.elapsed_s, wall)
