"""`investigate --planner llm` through the real CLI, against the fake OpenAI-compatible server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from investigator.testing.fake_openai import FakeOpenAI, fault, malformed

from ..conftest import write_synth


def cli(args: list[str], env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "INVESTIGATOR_"))}
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=timeout, env={**base, **env},
    )  # fmt: skip


def test_llm_planner_from_the_cli_falls_back_and_still_finds_the_cause(tmp_path: Path) -> None:
    data, _ = write_synth(tmp_path, "segment_change", seed=8, segment={"country": "FR"}, factor=0.5)
    out = tmp_path / "r.json"
    with FakeOpenAI(default=lambda seen: malformed()) as server:
        r = cli(
            ["--data", str(data), "--metric", "revenue", "--planner", "llm", "--model", "tiny-model",
             "--json", str(out), "--runs-dir", str(tmp_path / "runs"), "--max-iterations", "12",
             "--sandbox", "local"],
            {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-test-cli",
             "INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES": "0"},
        )  # fmt: skip
        models = {s.body.get("model") for s in server.requests}
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("code the model writes runs on this machine") == 1  # said once, plainly
    report = json.loads(out.read_text())
    assert report["stats"]["planner"] == "llm"
    assert models == {"tiny-model"}  # --model reached the request
    assert report["root_causes"][0]["segment"] == {"country": "FR"}
    assert any("offline fallback" in f["summary"] for f in report["findings"])
    assert report["stats"]["tokens"]["total"] > 0


def test_bad_key_fails_fast_with_exit_2(tmp_path: Path) -> None:
    data, _ = write_synth(tmp_path, "no_change", seed=1)
    with FakeOpenAI(default=lambda seen: fault(401, "invalid api key")) as server:
        r = cli(
            [
                "--data",
                str(data),
                "--metric",
                "revenue",
                "--planner",
                "llm",
                "--runs-dir",
                str(tmp_path / "runs"),
                "--sandbox",
                "local",
            ],
            {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-wrong-canary"},
        )
        calls = len(server.requests)
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr and "sk-wrong-canary" not in r.stderr + r.stdout
    assert calls == 1
    state = next((tmp_path / "runs").glob("*/state.json"))
    assert json.loads(state.read_text())["status"] == "running"  # saved state left intact for resume


def test_the_llm_planner_without_a_docker_daemon_refuses_unless_local_is_asked_for(tmp_path: Path) -> None:
    data, _ = write_synth(tmp_path, "no_change", seed=1)
    args = [
        "--data",
        str(data),
        "--metric",
        "revenue",
        "--planner",
        "llm",
        "--runs-dir",
        str(tmp_path / "runs"),
    ]
    no_daemon = {
        "DOCKER_HOST": f"unix://{tmp_path}/no-docker.sock",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
    }
    r = cli(args, no_daemon)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no Docker daemon answers" in r.stderr and "--sandbox local" in r.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())  # nothing half-made


def test_a_plain_http_endpoint_elsewhere_never_gets_the_key(tmp_path: Path) -> None:
    data, _ = write_synth(tmp_path, "no_change", seed=1)
    args = ["--data", str(data), "--metric", "revenue", "--planner", "llm", "--sandbox", "local",
            "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    r = cli(
        args, {"OPENAI_BASE_URL": "http://llm.example.internal:8000/v1", "OPENAI_API_KEY": "sk-canary-http"}
    )
    assert r.returncode == 2 and "refusing to send OPENAI_API_KEY over plain http" in r.stderr
    assert "sk-canary-http" not in r.stderr + r.stdout


# a model server in its own process that answers once, then dies (as a crashed vLLM would)
ANSWERS_ONCE = """
import os, threading, time
from investigator.testing.fake_openai import FakeOpenAI, malformed
def respond(seen):
    threading.Timer(0.3, os._exit, [0]).start()
    return malformed()
server = FakeOpenAI(default=respond).start()
print(server.url, flush=True)
time.sleep(300)
"""


@pytest.mark.long
def test_an_endpoint_that_dies_mid_run_stops_it_in_seconds_with_its_id(tmp_path: Path) -> None:
    """It answered, then its server went: a refused connection gets a short retry, not four
    minutes of backoff, and no line (instructor's own log, once a library configured logging)
    shows a literal RUN_ID."""
    data, _ = write_synth(tmp_path, "segment_change", seed=8, segment={"country": "FR"}, factor=0.5)
    home = {"INVESTIGATOR_HOME": str(tmp_path / "home"), "INVESTIGATOR_WARM": "0"}
    first = cli(
        ["--data", str(data), "--metric", "revenue", "--runs-dir", str(tmp_path / "old"), "--quiet"], home
    )
    assert first.returncode == 0, first.stderr  # memories to recall: the recall model loads (and logging)
    server = subprocess.Popen([sys.executable, "-c", ANSWERS_ONCE], stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()  # type: ignore[union-attr]
        env = {
            **home,
            "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "sk-x",
            "INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES": "0",
            # asked every step: a model given up on after two failures may never meet its dead server
            "INVESTIGATOR_LLM_GIVE_UP_AFTER": "0",
        }
        args = [
            "--data",
            str(data),
            "--metric",
            "revenue",
            "--planner",
            "llm",
            "--runs-dir",
            str(tmp_path / "runs"),
        ]
        started = time.monotonic()
        r = cli([*args, "--sandbox", "local", "--model", "m"], env, timeout=90)
        took = time.monotonic() - started
    finally:
        server.kill()
        server.communicate()  # waits for it and closes its pipe
    (run,) = (tmp_path / "runs").iterdir()
    assert r.returncode == 4, r.stderr  # its own outcome, not an internal error (exit 1)
    assert took < 45, took  # the whole run, start-up included; not minutes of backoff
    assert "the model endpoint was lost" in r.stderr and "refuses connections" in r.stderr
    assert f"`investigate resume {run.name}`" in r.stderr
    assert "RUN_ID" not in r.stderr + r.stdout and "Traceback" not in r.stderr
    assert (run / "state.json").is_file()


@pytest.mark.long
def test_an_llm_run_with_memories_and_re_asks_prints_no_library_log_lines(tmp_path: Path) -> None:
    """The recall model's import configured the root logger at INFO: each request printed an
    `INFO:httpx` line and each failed re-ask an `ERROR:instructor` dump over the status line."""
    data, _ = write_synth(tmp_path, "segment_change", seed=8, segment={"country": "FR"}, factor=0.5)
    home = {"INVESTIGATOR_HOME": str(tmp_path / "home"), "INVESTIGATOR_WARM": "0"}
    first = cli(
        ["--data", str(data), "--metric", "revenue", "--runs-dir", str(tmp_path / "old"), "--quiet"], home
    )
    assert first.returncode == 0, first.stderr  # memories to recall: the recall model is imported
    with FakeOpenAI(default=lambda seen: malformed()) as server:
        r = cli(
            ["--data", str(data), "--metric", "revenue", "--planner", "llm", "--model", "m",
             "--runs-dir", str(tmp_path / "runs"), "--max-iterations", "2", "--sandbox", "local"],
            {**home, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-x",
             "INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES": "1"},
        )  # fmt: skip
        asked = len(server.requests)
    assert r.returncode in (0, 3), r.stderr
    assert asked >= 4  # every call was re-asked once
    out = r.stderr + r.stdout
    for line in ("INFO:httpx", "HTTP Request", "ERROR:instructor", "INFO:", "DEBUG:"):
        assert line not in out, out[-3000:]
    with FakeOpenAI(default=lambda seen: malformed()) as server:
        loud = cli(
            ["--verbose", "--data", str(data), "--metric", "revenue", "--planner", "llm", "--model", "m",
             "--runs-dir", str(tmp_path / "runs"), "--max-iterations", "1", "--sandbox", "local", "--quiet"],
            {**home, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-x",
             "INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES": "0"},
        )  # fmt: skip
    assert loud.returncode in (0, 3), loud.stderr
    assert "HTTP Request: POST" in loud.stderr  # --verbose: one line per request, as asked


NOTEBOOK_RUN = """
import sys
from investigator import investigate
investigate(sys.argv[1], "revenue", planner="llm", sandbox="local", model="m", max_iterations=2,
            runs_dir=sys.argv[2], home=sys.argv[3], quiet=True)
"""


@pytest.mark.long
def test_the_notebook_api_with_memories_and_re_asks_prints_no_library_log_lines(tmp_path: Path) -> None:
    """No CLI set up logging here: the recall model's import configured the root logger at INFO,
    and every request to the model printed an `INFO:httpx` line into the notebook."""
    data, _ = write_synth(tmp_path, "segment_change", seed=8, segment={"country": "FR"}, factor=0.5)
    home = {"INVESTIGATOR_HOME": str(tmp_path / "home"), "INVESTIGATOR_WARM": "0"}
    first = cli(
        ["--data", str(data), "--metric", "revenue", "--runs-dir", str(tmp_path / "old"), "--quiet"], home
    )
    assert first.returncode == 0, first.stderr  # memories to recall: the recall model is imported
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "INVESTIGATOR_"))}
    with FakeOpenAI(default=lambda seen: malformed()) as server:
        env = {**base, "OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-x",
               "INVESTIGATOR_LLM_MAX_VALIDATION_RETRIES": "1"}  # fmt: skip
        r = subprocess.run(
            [sys.executable, "-c", NOTEBOOK_RUN, str(data), str(tmp_path / "runs"), str(tmp_path / "home")],
            capture_output=True, text=True, timeout=300, env=env,
        )  # fmt: skip
        asked = len(server.requests)
    assert r.returncode == 0, r.stderr[-3000:]
    assert asked >= 4
    out = r.stderr + r.stdout
    for line in ("INFO:httpx", "HTTP Request", "ERROR:instructor"):
        assert line not in out, out[-3000:]
