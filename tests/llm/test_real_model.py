"""The LLM planner against a real model on a real OpenAI-compatible server: llama-cpp-python's
server with SmolLM2-135M-Instruct, the small model a user with no GPU tries first.

The venv with the server and the model is made by `.ci/local-model.sh` (about 5 minutes: it builds
llama.cpp for a generic x86-64 CPU). Without it the test skips and says how to make it; CI sets
INVESTIGATOR_REQUIRE_LOCAL_MODEL=1, and there a missing model is a failure, not a skip.

A model this small cannot plan an investigation, and the test does not pretend it can: it checks
what the user must be able to rely on all the same. The demo finishes, with the right answer (every
step the model cannot decide is the offline planner's, every cause re-checked on the data); every
step is counted as the model's or the fallback's, on the terminal and in report.json; nothing but
the tool's own lines reach the terminal; and the API key goes only in the Authorization header:
every request is recorded by a proxy between the tool and the server, and the run's files too.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import Any

import pytest

from ..net import free_port
from .test_cli_llm import cli

PROJECT = Path(__file__).resolve().parents[2]
VENV = PROJECT / ".venv-llm"
CANARY = "sk-canary-local-model-7f3a9c"
HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "proxy-connection"}


def _model() -> tuple[Path, Path]:
    ready = VENV / "READY"
    if not ready.is_file():
        why = "no local model: run `bash .ci/local-model.sh` (builds llama.cpp, about 5 minutes)"
        if os.environ.get("INVESTIGATOR_REQUIRE_LOCAL_MODEL") == "1":
            pytest.fail(f"{why}; CI requires it (see /tmp/ci-llm.log)")
        pytest.skip(why)
    return VENV / "bin" / "python", Path(ready.read_text().strip())


class Recorder:
    """A pass-through HTTP proxy that keeps every request (headers and body) and streams each
    answer back as it comes, so the client's streaming and stall detection work as without it."""

    def __init__(self, upstream: int):
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

            def _forward(self, body: bytes) -> None:
                headers = {k.lower(): v for k, v in self.headers.items() if k.lower() not in HOP | {"host"}}
                recorder.requests.append((self.path, headers, body))
                conn = http.client.HTTPConnection("127.0.0.1", upstream, timeout=600)
                conn.request(self.command, self.path, body=body or None, headers=headers)
                answer = conn.getresponse()
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in HOP:
                        self.send_header(k, v)
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                try:
                    while chunk := answer.read1(65536):
                        self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                        self.wfile.flush()
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):  # the client closed a stalled stream
                    self.close_connection = True
                finally:
                    conn.close()

        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.port = self.server.server_address[1]

    def __enter__(self) -> Recorder:
        Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def llama_server() -> Iterator[int]:
    """llama-cpp-python's server on a free loopback port, as docs/local-models.md starts it: one
    thread reads a prompt as fast as two on these cores, and leaves the other core to the suite's
    other worker (with two, the server and that worker slowed each other: 238 s for this test)."""
    python, model = _model()
    port = free_port()
    log = (VENV / "server.log").open("w")
    server = subprocess.Popen(
        [str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "8192", "--n_threads", "1", "--flash_attn", "true"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2).read()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama.cpp server did not start (see {log.name})") from None
                time.sleep(0.5)
        yield port
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


@pytest.mark.long
@pytest.mark.timeout(900)
def test_the_demo_with_a_real_small_model(llama_server: int, tmp_path: Path) -> None:
    out, runs = tmp_path / "report.json", tmp_path / "runs"
    with Recorder(llama_server) as proxy:
        r = cli(
            ["--metric", "revenue", "--planner", "llm", "--model", "smollm2", "--sandbox", "local",
             "--json", str(out), "--runs-dir", str(runs)],
            # one step the model cannot decide, then the rest offline: every check below holds
            # for one such step as for two, and each costs ~40 s of prompt reading on 2 cores (the
            # give-up rule itself is tested against the fake server, tests/llm/test_model_steps.py)
            {"OPENAI_BASE_URL": f"http://127.0.0.1:{proxy.port}/v1", "OPENAI_API_KEY": CANARY,
             "INVESTIGATOR_LLM_GIVE_UP_AFTER": "1"},
            timeout=600,  # the bound: the model's steps plus the fallback's, on a loaded 2-core machine
        )  # fmt: skip
        asked = [
            (path, headers, body) for path, headers, body in proxy.requests if path.endswith("/completions")
        ]
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())

    # the answer is right whoever decided: the demo's planted cause, re-checked on the data
    assert any(c["segment"] == {"channel": "paid_search"} for c in report["root_causes"]), report[
        "conclusion"
    ]

    # every step is the model's or the fallback's, and the terminal says which, as report.json does
    model = report["stats"]["model"]
    steps = model["decided"] + model["fell_back"]
    assert steps >= 1 and model["reasked"] <= model["decided"]
    screen = " ".join(r.stdout.split())
    assert (
        f"the model decided {model['decided']} of {steps} steps ({model['reasked']} after a re-ask)" in screen
    )
    if model["fell_back"] * 2 > steps:
        assert "this model could not follow the format" in screen

    # the tool's own lines only: no library logging, no traceback
    for line in r.stderr.splitlines():
        assert not any(noise in line for noise in ("INFO", "ERROR", "DEBUG", "Traceback", "httpx")), line

    # the key: in the Authorization header of every request, and in nothing else
    assert asked and all(h.get("authorization") == f"Bearer {CANARY}" for _, h, _ in asked)
    assert all(CANARY.encode() not in body for _, _, body in proxy.requests)
    assert all(json.loads(body)["stream"] is True for _, _, body in asked)  # streamed: stalls are timed
    assert CANARY not in r.stdout + r.stderr
    for f in runs.rglob("*"):
        if f.is_file():
            assert CANARY.encode() not in f.read_bytes(), f
