"""Regression (issue 37, items 3 and 7): `investigate mcp` over HTTP had no ceilings. Eight
concurrent `investigate` calls started 24 processes and 2.6 GB; 1,000 `initialize` calls held their
memory twenty minutes later (no idle timeout reached the transport); a 10 MB `data` argument came
back as `failed: OSError` with the 10 MB echoed. Now runs are limited (as many wait, beyond is
refused in one line) while the cheap tools still answer, sessions are capped and closed when idle,
and every argument's length is capped without echoing it. The official MCP client, in memory and
over the real streamable-HTTP transport."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client

from investigator.front.mcp_server import build_server
from investigator.front.mcp_tools import Place
from tests.conftest import write_synth
from tests.net import answers, free_port, until

TOKEN = "ceiling-token-3"
HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    },
}
HEADERS = {
    "Accept": "application/json, text/event-stream",
    "Content-Type": "application/json",
    "Authorization": f"Bearer {TOKEN}",
}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _text(result: Any) -> str:
    return " ".join(c.text for c in result.content if c.type == "text")


@pytest.mark.anyio
@pytest.mark.long
async def test_runs_beyond_the_limit_wait_or_are_refused_and_list_runs_stillanswers(tmp_path: Path) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    place = Place(runs_dir=tmp_path / "runs", home=tmp_path / "home", max_runs=1)
    server, jobs = build_server(place)
    answers: list[Any] = []
    cheap: list[float] = []
    async with Client(server) as client:

        async def run() -> None:
            answers.append(await client.call_tool("investigate", {"metric": "revenue", "data": str(path)}))

        async def listing() -> None:
            await anyio.sleep(0.5)
            started = time.monotonic()
            result = await client.call_tool("list_runs", {})
            assert not result.is_error
            cheap.append(time.monotonic() - started)

        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(run)
            tg.start_soon(listing)
            tg.start_soon(listing)
        assert await anyio.to_thread.run_sync(jobs.stop_all, 120.0)
    refused = [a for a in answers if a.is_error]
    assert len(refused) == 1 and len(answers) == 3
    message = _text(refused[0])
    assert message.startswith("error: 1 investigations are running") and "--max-runs" in message
    assert all(not a.is_error for a in answers if a is not refused[0])
    assert cheap and max(cheap) < 5.0  # answered while the runs went on, not after them


@pytest.mark.anyio
async def test_no_argument_is_echoed_however_long(tmp_path: Path) -> None:
    place = Place(runs_dir=tmp_path / "runs", home=tmp_path / "home")
    server, _ = build_server(place)
    huge = "x" * 100_000
    async with Client(server) as client:
        for tool, args in [
            ("describe_data", {"data": huge}),
            ("investigate", {"metric": "revenue", "data": huge}),
            ("investigate", {"metric": huge}),
            ("investigate", {"metric": "revenue", "filter": "(" * 60 + "a=1" + ")" * 60}),
            ("get_report", {"run_id": huge}),
        ]:
            result = await client.call_tool(tool, args)
            text = _text(result)
            assert result.is_error and text.startswith("error: ") and "\n" not in text, text[:300]
            assert "xxxxxxxxxx" not in text and "((((((((((" not in text and len(text) < 400, text[:300]


@pytest.fixture
def capped(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "investigator", "mcp", "--transport", "http", "--port", str(port),
         "--max-sessions", "2", "--idle-timeout", "2"],
        env={**os.environ, "INVESTIGATOR_MCP_TOKEN": TOKEN}, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert until(lambda: answers(port) or proc.poll() is not None, 60) and proc.poll() is None
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def test_over_http_sessions_are_capped_and_closed_when_idle_and_bodies_bounded(capped: str) -> None:
    with httpx.Client(timeout=30) as http:
        opened = [http.post(capped, json=HELLO, headers=HEADERS) for _ in range(3)]
        assert [r.status_code for r in opened] == [200, 200, 503]
        time.sleep(4.5)  # past the idle timeout: both sessions are closed
        assert http.post(capped, json=HELLO, headers=HEADERS).status_code == 200
        huge = {
            **HELLO,
            "params": {**HELLO["params"], "clientInfo": {"name": "y" * 2_000_000, "version": "0"}},
        }
        refused = http.post(capped, json=huge, headers=HEADERS)
        assert refused.status_code == 413 and "yyyyyyyyyy" not in refused.text
