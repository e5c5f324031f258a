"""The warm helper, end to end: the real `investigate` command, a real helper process, its
worker and sandbox server. A run through the helper must be the run `investigate` makes without
one (folder, exit code, what is printed), no secret of the client may reach the helper's other
processes, and the helper must go away when told or when idle."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from investigator.front.entry import HELPER_MAIN
from investigator.warm.client import ask, helpers, start_helper
from investigator.warm.place import folder, helper_key, wanted
from tests.conftest import write_synth

INVESTIGATE = str(Path(sys.executable).parent / "investigate")
CANARY = "sk-canary-warm-4f1d2a"
Warm = tuple[Path, Path]  # the socket folder, a small table


def _social(where: Path, **kw: object) -> tuple[Path, dict]:
    """A table where the social channel halved in the window."""
    return write_synth(where, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5, **kw)


def _env(where: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_WARM")}
    return {**env, "INVESTIGATOR_WARM": "1", "INVESTIGATOR_WARM_DIR": str(where), **extra}


def _investigate(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([INVESTIGATE, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def _wait(check, seconds: float = 120.0, every: float = 0.2):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(every)
    raise AssertionError(f"gave up waiting after {seconds:.0f}s")


def _info(where: Path) -> dict:
    found = helpers({"INVESTIGATOR_WARM_DIR": str(where)})
    assert len(found) == 1, found
    return found[0][1]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().split()[2]


def _tree(root: int) -> list[int]:
    """`root` and every process below it."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, frontier = [root], [root]
    while frontier:
        frontier = [pid for pid, parent in parents.items() if parent in frontier]
        found += frontier
    return found


def _family(where: Path) -> list[int] | None:
    """The helper's processes once its worker and the worker's server have started."""
    found = _tree(_info(where)["pid"])
    return found if len(found) >= 3 else None


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warm]:
    """A helper started the way a user starts one: the first run goes on in-process and leaves a
    helper behind; returns (socket folder, data file) once its worker is ready."""
    where = Path(tempfile.mkdtemp(prefix="iw-"))  # short: a socket path has at most 107 bytes
    data, _ = _social(tmp_path_factory.mktemp("warm-data"))
    home = tmp_path_factory.mktemp("warm-home")
    first = _investigate(
        ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs"],
        _env(where, INVESTIGATOR_HOME=str(home)),
        home,
    )
    assert first.returncode == 0, first.stderr
    _wait(lambda: helpers({"INVESTIGATOR_WARM_DIR": str(where)}) and _info(where)["ready"])
    assert _info(where)["served"] == 0  # that first run was not the helper's
    yield where, data
    for path, _ in helpers({"INVESTIGATOR_WARM_DIR": str(where)}):
        ask(path, "stop")
    shutil.rmtree(where, ignore_errors=True)


def test_a_run_through_the_helper_is_the_run_investigate_makes(warm: Warm, tmp_path: Path) -> None:
    where, data = warm
    served = _info(where)["served"]
    out = _investigate(
        ["--data", str(data), "--metric", "revenue", "--runs-dir", "here", "--json", "answer.json"],
        _env(where),
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    assert _info(where)["served"] == served + 1  # the helper ran it
    (run,) = (tmp_path / "here").iterdir()  # a relative folder is the client's, not the helper's
    report = json.loads((run / "report.json").read_text())
    assert report["root_causes"][0]["segment"] == {"channel": "social"}
    assert json.loads((tmp_path / "answer.json").read_text())["run_id"] == run.name
    assert "channel=social" in out.stdout  # printed on the client's own terminal
    assert (run / "report.html").is_file() and (run / "investigation.ipynb").is_file()


def _untimed(printed: str) -> str:
    """What a run prints, its closing line's times out ('7 iterations in 6.5s (start 4.4, ...)')."""
    return re.sub(r"\b(in|start|data|loop|artifacts) \d+(\.\d+)?s?\b", r"\1 N", printed)


_TIMINGS = ("elapsed_s", "phases", "earlier_s")


def _comparable(report: dict, run_id: str, cwd: Path) -> dict:
    """The report without what differs between two runs of one question: the run's id, its
    timings, the folder it ran in."""
    stats = {k: v for k, v in report["stats"].items() if k not in _TIMINGS}
    rest = {k: v for k, v in report.items() if k not in ("run_id", "stats")}
    text = json.dumps({**rest, "stats": stats}).replace(run_id, "RUN").replace(str(cwd), "CWD")
    return json.loads(text)


@pytest.mark.parametrize(
    "question", [["--window", "7d"], ["--window", "2w", "--dimensions", "channel,country"]]
)
def test_the_same_question_cold_and_through_the_helper_gives_the_same_report(
    warm: Warm, tmp_path: Path, question: list[str]
) -> None:
    """The helper is only faster: its worker has run a warm-up investigation in the same process
    and its kernel comes from the pool, and none of that may show in the answer."""
    where, data = warm
    _wait(lambda: _info(where)["ready"])
    served = _info(where)["served"]
    reports, printed = {}, {}
    for warm_on in ("1", "0"):
        cwd = tmp_path / f"warm-{warm_on}"
        cwd.mkdir()  # its own memory too: a run recalls the runs before it
        env = _env(where, INVESTIGATOR_WARM=warm_on, INVESTIGATOR_HOME=str(cwd / "home"))
        out = _investigate(
            ["--data", str(data), "--metric", "revenue", *question, "--runs-dir", "runs"], env, cwd
        )
        assert out.returncode == 0, out.stderr
        (run,) = (cwd / "runs").iterdir()
        reports[warm_on] = _comparable(json.loads((run / "report.json").read_text()), run.name, cwd)
        printed[warm_on] = _untimed(out.stdout.replace(run.name, "RUN").replace(str(cwd), "CWD"))
    assert _info(where)["served"] == served + 1  # the first through the helper, the second cold
    assert reports["1"] == reports["0"]
    assert printed["1"] == printed["0"]


def test_a_user_error_keeps_its_exit_code_and_message(warm: Warm, tmp_path: Path) -> None:
    where, data = warm
    served = _info(where)["served"]
    args = ["--data", str(data), "--metric", "no_such_column", "--runs-dir", "runs"]
    out = _investigate(args, _env(where), tmp_path)
    assert out.returncode == 2
    assert "no_such_column" in out.stderr
    assert _info(where)["served"] == served + 1
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_no_secret_of_the_client_reaches_the_helpers_processes(warm: Warm, tmp_path: Path) -> None:
    """While a run with a key in its environment goes through the helper, no process of the helper
    (itself, the worker, sandbox servers, kernels) holds the key in its environment: only the run's
    own process has it, in memory, and that process is not dumpable."""
    where, data = warm
    daemon = _info(where)["pid"]
    seen: dict[int, str] = {}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            for pid in _tree(daemon):
                try:
                    text = b"".join(Path(f"/proc/{pid}/{f}").read_bytes() for f in ("environ", "cmdline"))
                    seen[pid] = seen.get(pid, "") + text.decode(errors="replace")
                except OSError:
                    continue
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        out = _investigate(
            ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs"],
            _env(where, OPENAI_API_KEY=CANARY, DATABASE_URL=f"postgresql://u:{CANARY}@db/x"),
            tmp_path,
        )
    finally:
        done.set()
        watcher.join()
    assert out.returncode == 0, out.stderr
    kernels = [pid for pid, text in seen.items() if "kernel_guard" in text]
    assert kernels and len(seen) >= 4  # the helper, a worker, a sandbox server and its kernel were seen
    assert not [pid for pid, text in seen.items() if CANARY in text]


def test_a_killed_client_stops_its_run(warm: Warm, tmp_path: Path) -> None:
    """The run stops as Ctrl-C would (checkpoints kept for `investigate resume`) instead of going
    on for a terminal nobody reads. The run waits on a model endpoint that never answers (it would
    wait 90 s), so only the client going can end it in time."""
    where, data = warm
    silent = socket.create_server(("127.0.0.1", 0))
    _wait(lambda: _info(where)["ready"])
    args = ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs", "--planner", "llm"]
    endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    client = subprocess.Popen(
        [INVESTIGATE, *args, "--model", "m", "--sandbox", "local"],
        env=_env(where, OPENAI_BASE_URL=endpoint, OPENAI_API_KEY="sk-x"),
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        silent.settimeout(120)
        asked, _ = silent.accept()  # the run waits for the model
        client.kill()
        client.wait()
        _wait(lambda: _info(where)["running"] == 0, 20)
    finally:
        silent.close()
    (run,) = (tmp_path / "runs").iterdir()
    assert (run / "state.json").is_file()
    assert not (run / "report.json").exists()
    asked.close()


def test_stop_and_idle_leave_no_process_behind(tmp_path: Path) -> None:
    where = Path(tempfile.mkdtemp(prefix="iw-"))
    try:
        env = _env(where, INVESTIGATOR_WARM_IDLE="8")
        start_helper(where, helper_key(env), env, HELPER_MAIN)
        _wait(lambda: helpers({"INVESTIGATOR_WARM_DIR": str(where)}))
        processes = _wait(lambda: _family(where), 30)
        # the helper, its worker warming up, the worker's sandbox server (and kernel): idle for 8 s,
        # it goes, with all of them and the worker's scratch folder
        _wait(lambda: not list(where.glob("*.sock")), 60)
        _wait(lambda: not any(_alive(pid) for pid in processes), 30)
        assert not list(where.glob("*.spares"))

        start_helper(where, helper_key(env), env, HELPER_MAIN)
        _wait(lambda: helpers({"INVESTIGATOR_WARM_DIR": str(where)}))
        processes = _wait(lambda: _family(where), 30)
        stopped = subprocess.run(
            [INVESTIGATE, "warm", "stop"], env=_env(where), capture_output=True, text=True, timeout=60
        )
        assert stopped.stdout.strip() == "stopped 1 helper(s)"
        _wait(lambda: not list(where.glob("*.sock")) and not any(_alive(pid) for pid in processes), 30)
        assert not list(where.glob("*.spares"))
    finally:
        for path, _ in helpers({"INVESTIGATOR_WARM_DIR": str(where)}):
            ask(path, "stop")
        shutil.rmtree(where, ignore_errors=True)


# the choices, without processes ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("env", "interactive", "used"),
    [
        ({}, True, True),
        ({}, False, False),  # a script, a pipe, cron
        ({"CI": "true"}, True, False),
        ({"INVESTIGATOR_WARM": "0"}, True, False),
        ({"INVESTIGATOR_WARM": "1"}, False, True),
        ({"INVESTIGATOR_WARM": "1", "CI": "true"}, False, True),
    ],
)
def test_when_a_helper_is_used(env: dict[str, str], interactive: bool, used: bool) -> None:
    assert wanted(env, interactive) is used


def test_another_sandbox_environment_is_another_helper() -> None:
    base = {"PATH": "/usr/bin", "HOME": "/home/a"}
    assert helper_key(base) == helper_key(dict(base))
    assert helper_key(base) != helper_key({**base, "PATH": "/opt/bin:/usr/bin"})
    assert helper_key(base) == helper_key({**base, "OPENAI_API_KEY": CANARY})  # not a sandbox variable


def test_an_upgraded_dependency_is_another_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install -U somedep` while a helper lives: the next run must not be served by modules
    the helper imported before the upgrade (it was, until the helper idled out)."""
    site = tmp_path / "site-packages"
    (site / "somedep-1.0.dist-info").mkdir(parents=True)
    monkeypatch.syspath_prepend(str(site))
    before = helper_key({})
    assert helper_key({}) == before  # nothing changed, the same helper
    (site / "somedep-1.0.dist-info").rename(site / "somedep-1.1.dist-info")  # an upgrade
    upgraded = helper_key({})
    assert upgraded != before
    shutil.rmtree(site / "somedep-1.1.dist-info")
    (site / "somedep-1.1.dist-info").mkdir()  # reinstalled in place, same version
    os.utime(site / "somedep-1.1.dist-info", ns=(1, 1))
    assert helper_key({}) not in (before, upgraded)


def test_a_socket_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    assert folder({"INVESTIGATOR_WARM_DIR": str(shared)}) is None
    own = folder({"INVESTIGATOR_WARM_DIR": str(tmp_path / "own")})
    assert own is not None and own.stat().st_mode & 0o777 == 0o700


def test_sigterm_to_the_client_stops_the_run_as_ctrl_c_does(warm: Warm, tmp_path: Path) -> None:
    """A scheduler stopping `investigate` while the helper runs it: exit 130 and the run's own id
    to resume (it was exit 1 and a literal `RUN_ID`)."""
    where, data = warm
    silent = socket.create_server(("127.0.0.1", 0))
    _wait(lambda: _info(where)["ready"])
    args = ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs", "--planner", "llm"]
    endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    client = subprocess.Popen(
        [INVESTIGATE, *args, "--model", "m", "--sandbox", "local"],
        env=_env(where, OPENAI_BASE_URL=endpoint, OPENAI_API_KEY="sk-x"),
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        silent.settimeout(120)
        asked, _ = silent.accept()
        client.send_signal(signal.SIGTERM)
        _, err = client.communicate(timeout=60)
    finally:
        client.kill()
        silent.close()
    asked.close()
    (run,) = (tmp_path / "runs").iterdir()
    assert client.returncode == 130, err
    assert f"investigate resume {run.name}" in err and "RUN_ID" not in err
    assert (run / "state.json").is_file()


def test_an_llm_run_through_the_helper_prints_no_logging_errors(warm: Warm, tmp_path: Path) -> None:
    """The warm-up loads the recall model, whose import configures the root logger: its handler
    kept the warm-up's closed stream, and every HTTP request to the model printed a `--- Logging
    error ---` traceback (a cold run printed an `HTTP Request` line instead)."""
    from investigator.testing.fake_openai import FakeOpenAI, malformed

    where, data = warm
    _wait(lambda: _info(where)["ready"])
    served = _info(where)["served"]
    args = ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs", "--planner", "llm"]
    with FakeOpenAI(default=lambda seen: malformed()) as server:
        env = _env(
            where,
            OPENAI_BASE_URL=server.url,
            OPENAI_API_KEY="sk-x",
            INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES="0",
        )
        out = _investigate([*args, "--model", "m", "--sandbox", "local"], env, tmp_path)
        asked = len(server.requests)
    assert out.returncode == 0, out.stderr
    assert _info(where)["served"] == served + 1 and asked > 0
    assert "Logging error" not in out.stderr and "HTTP Request" not in out.stderr, out.stderr[-3000:]


def _memory_holds(pid: int, needle: bytes) -> bool:
    """Whether any readable mapping of process `pid` holds `needle` (the test runs as root, or as a
    user allowed to read its own processes' memory; else it is skipped)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        mem = open(f"/proc/{pid}/mem", "rb", 0)  # noqa: SIM115
    except OSError as e:
        pytest.skip(f"cannot read the helper's memory here ({e})")
    with mem:
        for line in maps:
            span, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            start, end = (int(x, 16) for x in span.split("-"))
            try:
                mem.seek(start)
                if needle in mem.read(end - start):
                    return True
            except (OSError, OverflowError, ValueError):
                continue
    return False


def test_the_helper_never_holds_a_runs_secrets(warm: Warm, tmp_path: Path) -> None:
    """The run's environment (an API key) is read by the run's own process, which exits: the
    long-lived helper, and the next worker it forks, never had it in memory."""
    where, data = warm
    _wait(lambda: _info(where)["ready"])
    canary = "sk-canary-memory-7c3e91d0"
    out = _investigate(
        ["--data", str(data), "--metric", "revenue", "--runs-dir", "runs"],
        _env(where, OPENAI_API_KEY=canary),
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    helper = _info(where)["pid"]
    assert not _memory_holds(helper, canary.encode())
