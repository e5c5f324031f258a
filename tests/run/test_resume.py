"""A run killed with SIGKILL mid-way resumes from its last checkpoint and reaches the same report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from investigator.front.flags import ask
from investigator.runner import investigate

from ..conftest import write_synth

KEYS = ("conclusion", "confidence", "root_causes", "hypotheses", "movement", "window", "baseline")


def _start(data: Path, runs: Path, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "investigator", "--data", str(data), "--metric", "revenue",
         "--runs-dir", str(runs), "--json", str(out), "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _kill_mid_run(data: Path, runs: Path, out: Path) -> Path | None:
    """SIGKILL the CLI once a checkpoint shows iteration >= 2 but the run is not finished."""
    proc = _start(data, runs, out)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            for state_file in runs.glob("*/state.json"):
                try:
                    state = json.loads(state_file.read_text())
                except (json.JSONDecodeError, OSError):
                    continue  # never expected (atomic writes), but a read race must not fail the test
                if state["iteration"] >= 2 and state["status"] == "running":
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait()
                    return state_file.parent
            time.sleep(0.005)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate()  # waits for it and closes its pipes
    return None


@pytest.mark.long
def test_sigkill_then_resume_gives_the_same_report(tmp_path: Path) -> None:
    # a larger table makes each step take long enough to be caught mid-run
    data, _ = write_synth(tmp_path, "segment_change", seed=5, segment={"channel": "email"}, factor=0.5,
                          dims={"country": [f"C{i}" for i in range(20)],
                                "platform": ["web", "ios", "android"],
                                "channel": ["organic", "paid", "social", "email", "affiliate"],
                                "category": [f"k{i}" for i in range(12)]})  # fmt: skip
    # the uninterrupted reference: the same flags through the command line's wiring, in this process
    asked = ask(metric="revenue", data=str(data), runs_dir=tmp_path / "ref-runs", flag="--")
    a = investigate(asked.request, asked.settings, llm=asked.llm).model_dump(mode="json")
    assert a["status"] == "concluded"

    folder = None
    for attempt in range(3):
        runs = tmp_path / f"runs{attempt}"
        folder = _kill_mid_run(data, runs, tmp_path / "never.json")
        if folder is not None:
            break
    if folder is None:
        pytest.fail("could not catch the run mid-way in 3 attempts")
    killed = json.loads((folder / "state.json").read_text())
    assert killed["status"] == "running" and killed["iteration"] >= 2

    resumed = tmp_path / "resumed.json"
    r = subprocess.run(
        [sys.executable, "-m", "investigator", "--runs-dir", str(folder.parent), "--json", str(resumed),
         "--quiet", "resume", folder.name],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    b = json.loads(resumed.read_text())
    for key in KEYS:
        assert a[key] == b[key], key
    assert [f["summary"] for f in a["findings"]] == [f["summary"] for f in b["findings"]]
    assert b["root_causes"][0]["segment"] == {"channel": "email"}


class _Planted:
    """A pickle that writes a marker when it is loaded: unpickling runs code."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (exec, (f"open({str(self.marker)!r}, 'w').write('unpickled')",))


def test_resume_runs_no_recorded_code_on_the_local_kernel(tmp_path: Path, segment_drop) -> None:  # type: ignore[no-untyped-def]
    """A poisoned run folder (a recorded step that sends the environment away, a planted pickle in
    the workspace) is resumed from its saved evidence: neither runs, and the answer is the same."""
    import pickle

    from investigator.config import load_settings
    from investigator.request import build_request
    from investigator.run.state import RunState, load, save
    from investigator.runner import investigate, resume

    data, _ = segment_drop
    settings = load_settings(runs_dir=tmp_path / "runs", sandbox="local")
    request = build_request("revenue", str(data), "7d", None, "previous", None, None, None)
    first = investigate(request, settings)
    folder = tmp_path / "runs" / first.run_id
    state = load(folder)
    step, replayed, unpickled = (next(i for i, d in enumerate(state.decisions) if d.runs_code),
                                 tmp_path / "replayed", tmp_path / "unpickled")  # fmt: skip
    poison = f"import os\nopen({str(replayed)!r}, 'w').write(repr(dict(os.environ)))\n"
    decisions = [d.model_copy(update={"code": poison + (d.code or "")}) if i == step else d
                 for i, d in enumerate(state.decisions)]  # fmt: skip
    killed = RunState.model_validate(
        {**dict(state), "decisions": decisions, "status": "running", "conclusion": None, "stop_reason": None}
    )
    save(killed, folder)
    (folder / "workspace" / ".state").mkdir(exist_ok=True)
    (folder / "workspace" / ".state" / "daily.pkl").write_bytes(pickle.dumps(_Planted(unpickled)))

    again = resume(first.run_id, settings)
    assert not replayed.exists(), "resume ran a recorded step's code in the local kernel"
    assert not unpickled.exists(), "resume loaded a pickle from the run folder into the local kernel"
    assert again.conclusion == first.conclusion and again.root_causes == first.root_causes
