"""Issue 39, item 2: a question the data's columns cannot answer (a metric column or a dimension
not there, a time column that is not dates) is refused before any kernel starts for it: the refusal
took as long as a run's start (it waited for the kernel it had started, to stop it). A spy in the
command's process records every sandbox server it starts."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ..conftest import cli, write_synth

SPY_ON_SERVERS = """
import os, subprocess
_init = subprocess.Popen.__init__
def _spy(self, args, *a, **k):
    words = [str(x) for x in (args if isinstance(args, (list, tuple)) else [args])]
    if any("sandbox" in w for w in words) and os.environ.get("SPY_LOG"):  # the sandbox's env has none
        with open(os.environ["SPY_LOG"], "a") as log:
            log.write(" ".join(words) + "\\n")
    _init(self, args, *a, **k)
subprocess.Popen.__init__ = _spy
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("early")
    return write_synth(folder, "segment_change", seed=5, segment={"channel": "social"}, factor=0.5)[0]


def _run(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    spy = tmp_path / "spy"
    spy.mkdir(exist_ok=True)
    (spy / "sitecustomize.py").write_text(SPY_ON_SERVERS)
    log = tmp_path / "servers.log"
    path = os.pathsep.join(p for p in (str(spy), os.environ.get("PYTHONPATH")) if p)
    r = cli(*args, "--runs-dir", str(tmp_path / "runs"), env={"PYTHONPATH": path, "SPY_LOG": str(log)})
    return r.returncode, " ".join(r.stderr.split()), log.read_text() if log.exists() else ""


REFUSED = {
    "unknown dimension": (
        ["--metric", "revenue", "--dimensions", "planet"],
        "dimension(s) 'planet' not found",
    ),
    "unknown metric column": (["--metric", "revenu"], "metric column 'revenu' not found"),
    "time column not dates": (
        ["--metric", "revenue", "--time-column", "sessions"],
        "time column 'sessions' holds integers from",
    ),
    "time column text that is not dates": (
        ["--metric", "revenue", "--time-column", "country"],
        "time column 'country' holds text that does not read as dates",
    ),
    "metric column not numbers": (
        ["--metric", "country"],
        "metric column 'country' holds string, not numbers",
    ),
}


@pytest.mark.parametrize("case", list(REFUSED))
def test_a_question_the_columns_cannot_answer_is_refused_before_a_kernel_starts(
    case: str, data: Path, tmp_path: Path
) -> None:
    args, words = REFUSED[case]
    code, err, servers = _run(tmp_path, "--data", str(data), *args)
    assert code == 2 and words in err, err
    assert servers == ""  # no sandbox server was started for a refused question
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_spy_sees_the_server_a_question_it_can_answer_starts(data: Path, tmp_path: Path) -> None:
    code, err, servers = _run(tmp_path, "--data", str(data), "--metric", "revenue", "--max-iterations", "1")
    assert code in (0, 3), err
    assert "sandbox" in servers


def _left_behind(folder: Path) -> list[str]:
    """Processes whose command line or working folder is under `folder` (a server started with its
    workspace there, a kernel working in it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if str(folder) in cmd or cwd.startswith(str(folder)):
            found.append(f"{pid}: {cmd[:120]}")
    return found


def test_a_question_the_dates_refuse_stops_its_server_at_once_and_starts_no_other(
    data: Path, tmp_path: Path
) -> None:
    """The window is checked against the data's dates while the kernel starts: refused there, the
    server spawned for the run is killed rather than waited for, its kernel ends with it, and the
    start gives up instead of starting a server of its own."""
    code, err, servers = _run(tmp_path, "--data", str(data), "--metric", "revenue", "--end", "2031-01-01")
    assert code == 2 and "after the data" in err, err
    assert len([line for line in servers.splitlines() if "-m sandbox" in line]) == 1, servers
    deadline = time.monotonic() + 20  # the kernel's guard ends it when the server's lifeline closes
    while _left_behind(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _left_behind(tmp_path) == []
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
