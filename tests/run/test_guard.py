"""One process per run, and a run continues only on the data it started with."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from investigator.errors import ConfigError, DataError
from investigator.run.guard import check_unchanged, fingerprint, run_lock


def test_a_second_holder_of_a_run_is_refused_until_the_first_lets_go(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import sys, time; from pathlib import Path; from investigator.run.guard import run_lock\n"
         f"with run_lock(Path({str(tmp_path)!r}), 'r1'):\n    print('held', flush=True); time.sleep(30)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(ConfigError, match="run r1 is in progress"), run_lock(tmp_path, "r1"):
            pass
    finally:
        holder.kill()
        holder.communicate()  # waits for it and closes its pipe
    with run_lock(tmp_path, "r1"):  # the holder died: its lock went with it
        pass


def test_changed_data_is_refused_and_the_same_data_passes(tmp_path: Path) -> None:
    data = tmp_path / "d.csv"
    data.write_text("date,revenue\n2026-03-01,10\n")
    saved = fingerprint(data)
    assert saved is not None and saved.size == data.stat().st_size
    check_unchanged(saved, data, "r1")
    data.write_text("date,revenue\n2026-03-01,99\n")  # same size, other content
    with pytest.raises(DataError, match="changed since run r1 started"):
        check_unchanged(saved, data, "r1")
    data.unlink()
    with pytest.raises(DataError, match="which is gone"):
        check_unchanged(saved, data, "r1")
