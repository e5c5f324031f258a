"""A scheduler's stop (SIGTERM) ends a run as Ctrl-C does: checkpoints kept, one line naming the
run to resume, exit 130 (it was 143 and nothing said)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from tests.conftest import write_synth


def test_sigterm_during_a_run_is_an_interrupt_with_the_run_to_resume(tmp_path: Path) -> None:
    data, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    silent = socket.create_server(("127.0.0.1", 0))  # a model endpoint that never answers: the run waits
    env = {
        **os.environ,
        "INVESTIGATOR_WARM": "0",
        "OPENAI_BASE_URL": f"http://127.0.0.1:{silent.getsockname()[1]}/v1",
        "OPENAI_API_KEY": "sk-x",
    }
    args = ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs", "--planner", "llm"]
    run = subprocess.Popen(
        [sys.executable, "-m", "investigator", *args, "--model", "m", "--sandbox", "local"],
        env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        silent.settimeout(120)
        asked, _ = silent.accept()  # mid-run: the state is saved, the planner waits
        run.send_signal(signal.SIGTERM)
        _, err = run.communicate(timeout=60)
    finally:
        run.kill()
        silent.close()
    asked.close()
    (folder,) = (tmp_path / "runs").iterdir()
    assert run.returncode == 130, err
    assert f"interrupted; the run is saved: continue it with `investigate resume {folder.name}`" in err
    assert "Traceback" not in err and (folder / "state.json").is_file()
