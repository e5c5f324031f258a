"""`investigate mcp` through the official MCP client: in process (the SDK's in-memory session to the
server built here), over stdio (`investigate mcp` spawned as an assistant starts it) and over HTTP
(bearer token required). Every structured answer is validated against the output schema the tool
declares. Real investigations are few (each takes seconds): one cancelled and resumed in memory,
one over stdio; the rest are unit-level calls in memory.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import anyio
import httpx
import jsonschema
import pytest
import yaml
from mcp import Client, StdioServerParameters

from investigator.errors import UserError
from investigator.front.flags import ask
from investigator.front.mcp_server import Jobs, build_server
from investigator.front.mcp_tools import Place
from investigator.investigations import Runs
from investigator.testing import FakeRuns
from investigator.triage.digest import Digest, write_digest
from tests.conftest import write_synth
from tests.net import free_port

TOOLS = {"describe_data", "investigate", "resume", "get_report", "list_runs", "triage", "facts_list"}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def place(tmp_path: Path) -> Place:
    return Place(runs_dir=tmp_path / "runs", home=tmp_path / "home")


@pytest.fixture
def drop(tmp_path: Path) -> Path:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    return path


@contextlib.asynccontextmanager
async def served(
    place: Place, runs: Runs | None = None
) -> AsyncIterator[tuple[Client, Jobs, dict[str, Any]]]:
    """A client session to the server built in this process (its runs real unless `runs` is given),
    and each tool's output schema."""
    server, jobs = build_server(place, runs)
    async with Client(server) as client:
        schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        try:
            yield client, jobs, schemas
        finally:
            assert await anyio.to_thread.run_sync(jobs.stop_all, 120.0)


def valid(result: Any, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The structured content of a successful call, checked against the tool's declared schema."""
    assert not result.is_error, result.content
    assert schema is not None and result.structured_content is not None
    jsonschema.validate(result.structured_content, schema)
    return dict(result.structured_content)


def refusal(result: Any) -> str:
    assert result.is_error, result
    (text,) = [c.text for c in result.content if c.type == "text"]
    return str(text)


# the tools as declared -------------------------------------------------------------------------
@pytest.mark.anyio
async def test_every_tool_declares_an_output_schema_and_the_report_is_the_published_one(place: Place) -> None:
    published = json.loads(resources.files("investigator.report").joinpath("report.schema.json").read_text())
    async with served(place) as (client, _, schemas):
        assert set(schemas) == TOOLS  # approving or rejecting a fact is a person's act: no tool
        assert all(schemas[name] for name in TOOLS)
        for name in ("investigate", "resume", "get_report"):
            assert schemas[name]["properties"] == published["properties"]
            assert set(schemas[name]["required"]) == set(published["required"])
        templates = {t.uri_template for t in (await client.list_resource_templates()).resource_templates}
        assert templates == {
            "investigator://runs/{run_id}/report",
            "investigator://triage/{digest_id}/digest",
        }


@pytest.mark.anyio
async def test_describe_data_says_what_a_run_would_pick(place: Place, drop: Path) -> None:
    async with served(place) as (client, _, schemas):
        d = valid(await client.call_tool("describe_data", {"data": str(drop)}), schemas["describe_data"])
    assert d["time_column"] == "date" and d["grain"] == "day" and d["suggested_window"] == "7d"
    assert d["first_date"] < d["last_date"] and d["rows"] > 0
    dims = {x["name"]: x["values"] for x in d["dimensions"]}
    assert "channel" in dims and dims["channel"] >= 2
    assert "revenue" in d["numeric_columns"]
    assert {m["name"] for m in d["metrics"]} >= {"revenue"}  # the package's configured metrics
    w = d["windows"]
    assert (
        w["problem"] is None and w["current_end"] == d["last_date"] and w["baseline_end"] < w["current_start"]
    )


@pytest.mark.anyio
async def test_describe_data_gives_the_runs_reason_to_refuse_a_window(place: Place, drop: Path) -> None:
    async with served(place) as (client, _, schemas):
        d = valid(
            await client.call_tool("describe_data", {"data": str(drop), "window": "20y"}),
            schemas["describe_data"],
        )
    assert d["windows"]["problem"] and "before the data" in d["windows"]["problem"]


@pytest.mark.anyio
async def test_describe_data_names_a_time_column_the_run_would_not_find_alone(
    place: Place, tmp_path: Path
) -> None:
    days = [f"2026-03-{d:02d}" for d in range(1, 29)]
    rows = [f"{day},{region},{10 + i}" for i, day in enumerate(days) for region in ("EU", "US")]
    data = tmp_path / "orders.csv"
    data.write_text("order_day,region,amount\n" + "\n".join(rows) + "\n")
    async with served(place) as (client, _, schemas):
        found = valid(await client.call_tool("describe_data", {"data": str(data)}), schemas["describe_data"])
        named = valid(
            await client.call_tool("describe_data", {"data": str(data), "time_column": "order_day"}),
            schemas["describe_data"],
        )
    assert found["time_column"] == "order_day" and found["time_column_given"] is False
    assert named["time_column_given"] is True and named["windows"] == found["windows"]
    assert found["dimensions"] == [{"name": "region", "values": 2}] and found["numeric_columns"] == ["amount"]


# bad arguments are the CLI's lines ----------------------------------------------------------------
@pytest.mark.anyio
async def test_bad_arguments_come_back_as_the_clis_one_line_error(place: Place, drop: Path) -> None:
    with pytest.raises(UserError) as window_error:
        ask(metric="revenue", window="7x")  # the CLI's sentence, naming the tool's argument
    async with served(place) as (client, _, _s):
        bad_window = await client.call_tool(
            "investigate", {"metric": "revenue", "data": str(drop), "window": "7x"}
        )
        assert refusal(bad_window) == f"error: {window_error.value}"
        missing = await client.call_tool(
            "investigate", {"metric": "revenue", "data": str(drop.with_name("no.csv"))}
        )
        assert refusal(missing).startswith("error: data file ") and "does not exist" in refusal(missing)
        assert refusal(await client.call_tool("get_report", {"run_id": "20260101-000000-abcdef"})).startswith(
            "error: no run"
        )
        for escape in ("../outside", "/etc", "a/../../b"):
            assert "is not a run id" in refusal(await client.call_tool("get_report", {"run_id": escape}))
        assert "is not a run id" in refusal(await client.call_tool("resume", {"run_id": "../x"}))
        typed = await client.call_tool("investigate", {"metric": "revenue", "baseline": "lastyear"})
        assert refusal(typed).startswith("error: baseline 'lastyear' is not understood")
    assert not place.runs_dir.exists() or not any(place.runs_dir.iterdir())  # nothing half made


@pytest.mark.anyio
@pytest.mark.parametrize(
    "secret", ["postgres://reader:hunter2-pw@127.0.0.1:1/db?sslpassword=tok3n", "sk-not-a-url-but-a-key-0042"]
)
async def test_env_data_is_read_on_the_host_and_its_secret_never_answered(
    place: Place, secret: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MCP_TEST_DATA_URL", secret)
    async with served(place) as (client, _, _s):
        for tool in ("describe_data", "investigate"):
            text = refusal(
                await client.call_tool(
                    tool, {"data": "env:MCP_TEST_DATA_URL", "table": "sales", "metric": "revenue"}
                )
            )
            assert text.startswith(("error: ", "failed: "))
            for part in ("hunter2-pw", "tok3n", "sk-not-a-url-but-a-key-0042"):
                assert part not in text


@pytest.mark.anyio
async def test_a_confined_server_takes_files_only_from_its_data_roots_and_no_client_urls(
    tmp_path: Path, drop: Path
) -> None:
    """What `investigate mcp --transport http` serves with: an HTTP client is not the user who
    started the server, so it names files under the data roots and connections by `env:VAR`."""
    inside = tmp_path / "shared-data"
    inside.mkdir()
    place = Place(runs_dir=tmp_path / "runs", home=tmp_path / "home", data_roots=[inside], urls=False)
    async with served(place) as (client, _, schemas):
        for tool in ("describe_data", "investigate"):
            text = refusal(await client.call_tool(tool, {"data": str(drop), "metric": "revenue"}))
            assert text.startswith("error: data file ") and "outside this server's data folders" in text
            escape = str(inside / ".." / drop.name)
            assert "outside" in refusal(await client.call_tool(tool, {"data": escape, "metric": "revenue"}))
            url = "postgres://u:pw@127.0.0.1:1/db"
            assert "no connection URL" in refusal(
                await client.call_tool(tool, {"data": url, "table": "t", "metric": "revenue"})
            )
        assert "triage config" in refusal(
            await client.call_tool("triage", {"config": str(tmp_path / "t.yaml")})
        )
        moved = drop.rename(inside / drop.name)
        valid(await client.call_tool("describe_data", {"data": str(moved)}), schemas["describe_data"])


@pytest.mark.anyio
async def test_calls_run_at_once_and_answer_the_run_s_report(place: Place) -> None:
    """Two investigations in flight together (neither waits for the other: the fake's barrier
    breaks unless both are inside it), each answered with its own run's report, schema-valid."""
    import threading

    runs = FakeRuns(meet=threading.Barrier(2, timeout=30))
    async with served(place, runs) as (client, _, schemas):
        answers: dict[str, dict[str, Any]] = {}

        async def call(metric: str) -> None:
            answers[metric] = valid(
                await client.call_tool("investigate", {"metric": metric}), schemas["investigate"]
            )

        async with anyio.create_task_group() as tg:
            tg.start_soon(call, "revenue")
            tg.start_soon(call, "orders")
    assert {m: (a["run_id"], a["conclusion"]) for m, a in answers.items()} == {
        "revenue": ("fake-revenue", "fake: investigate revenue"),
        "orders": ("fake-orders", "fake: investigate orders"),
    }
    assert sorted(runs.asked) == [("investigate", "orders", None), ("investigate", "revenue", None)]


@pytest.mark.anyio
async def test_a_run_s_user_error_is_the_tool_s_one_line_and_resume_more_continues(place: Place) -> None:
    """A run refused (a `UserError`) is the tool's error in one line; resume(more=3) asks for three
    more steps of that run, plain resume for a resume."""
    async with served(place, FakeRuns(fail=UserError("no column 'x'"))) as (client, _, _s):
        assert refusal(await client.call_tool("investigate", {"metric": "revenue"})) == "error: no column 'x'"
    runs = FakeRuns()
    (place.runs_dir / "20260329-101500-a1b2c3").mkdir(parents=True)
    (place.runs_dir / "20260329-101500-a1b2c3" / "state.json").write_text('{"iteration": 4}')
    async with served(place, runs) as (client, _, schemas):
        more = valid(
            await client.call_tool("resume", {"run_id": "20260329-101500-a1b2c3", "more": 3}),
            schemas["resume"],
        )
        again = valid(
            await client.call_tool("resume", {"run_id": "20260329-101500-a1b2c3"}), schemas["resume"]
        )
    assert (more["run_id"], again["conclusion"]) == (
        "20260329-101500-a1b2c3",
        "fake: resume 20260329-101500-a1b2c3",
    )
    assert runs.asked == [
        ("continue_run", "20260329-101500-a1b2c3", 3),
        ("resume", "20260329-101500-a1b2c3", None),
    ]


# runs, reports, facts, triage -----------------------------------------------------------------------
@pytest.mark.anyio
async def test_a_cancelled_investigation_stops_and_resumes_to_a_report(place: Place, drop: Path) -> None:
    """One real run: cancelled by the client after its first iteration (progress seen), it stops
    at the next one, resumable; resumed, it concludes with progress per iteration, and the report
    is the tool's answer, get_report's, the resource's and list_runs'."""
    async with served(place) as (client, jobs, schemas):
        first: list[tuple[float, float | None, str | None]] = []
        async with anyio.create_task_group() as tg:

            async def progress(p: float, total: float | None, message: str | None) -> None:
                first.append((p, total, message))
                tg.cancel_scope.cancel()

            args = {"metric": "revenue", "data": str(drop), "window": "7d", "max_iterations": 12}
            tg.start_soon(lambda: client.call_tool("investigate", args, progress_callback=progress))
        assert first and first[0][1] == 12 and "iteration 1/12" in (first[0][2] or "")
        assert await anyio.to_thread.run_sync(lambda: _until(lambda: jobs.running == 0, 120))
        (folder,) = list(place.runs_dir.iterdir())
        assert (folder / "state.json").is_file() and not (folder / "report.json").exists()
        listed = valid(await client.call_tool("list_runs", {}), schemas["list_runs"])
        assert [(r["run_id"], r["status"]) for r in listed["runs"]] == [(folder.name, "running")]

        seen: list[float] = []

        async def count(p: float, total: float | None, message: str | None) -> None:
            seen.append(p)

        done = await client.call_tool("resume", {"run_id": folder.name}, progress_callback=count)
        report = valid(done, schemas["resume"])
        assert report["run_id"] == folder.name and report["status"] in ("concluded", "partial")
        assert seen and seen == sorted(seen)
        assert (
            valid(await client.call_tool("get_report", {"run_id": folder.name}), schemas["get_report"])
            == report
        )
        (contents,) = (await client.read_resource(f"investigator://runs/{folder.name}/report")).contents
        assert json.loads(contents.text)["conclusion"] == report["conclusion"]  # type: ignore[union-attr]
        listed = valid(await client.call_tool("list_runs", {"metric": "revenue"}), schemas["list_runs"])
        assert listed["runs"][0]["status"] == report["status"]
        assert listed["runs"][0]["conclusion"] == report["conclusion"]


@pytest.mark.anyio
async def test_facts_list_and_empty_runs(place: Place) -> None:
    async with served(place) as (client, _, schemas):
        facts = valid(await client.call_tool("facts_list", {}), schemas["facts_list"])
        assert facts["approved"] == [] and facts["pending"] == []
        assert valid(await client.call_tool("list_runs", {}), schemas["list_runs"]) == {"runs": [], "more": 0}


@pytest.mark.anyio
async def test_triage_dry_run_and_digests_as_resources(place: Place, drop: Path, tmp_path: Path) -> None:
    config = tmp_path / "triage.yaml"
    elsewhere = tmp_path / "elsewhere"
    body = {"data": str(drop), "time_column": "date", "window": "7d", "metrics": ["revenue"],
            "runs_dir": str(elsewhere / "runs"), "state": str(elsewhere / "state.sqlite")}  # fmt: skip
    config.write_text(yaml.safe_dump(body))
    write_digest(Digest(), place.runs_dir / "triage-20260329T070000Z", "Triage")
    async with served(place) as (client, _, schemas):
        out = valid(await client.call_tool("triage", {"config": str(config)}), schemas["triage"])
        assert out["digest_id"] is None and out["exit_code"] == 0  # a dry run by default: nothing sent
        assert [s["metric"] for s in out["digest"]["scanned"]] == ["revenue"]
        (contents,) = (
            await client.read_resource("investigator://triage/triage-20260329T070000Z/digest")
        ).contents
        assert json.loads(contents.text)["scanned"] == []  # type: ignore[union-attr]
        with pytest.raises(Exception, match="not a triage digest"):
            await client.read_resource("investigator://triage/20260101-000000-abcdef/digest")
    assert not elsewhere.exists()  # the server's runs folder and home, whatever the config says


# the transports -----------------------------------------------------------------------------------------
def _until(check: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return bool(check())


@pytest.mark.anyio
async def test_over_stdio_investigate_mcp_answers_a_real_investigation(tmp_path: Path, drop: Path) -> None:
    runs = tmp_path / "served-runs"
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "investigator", "mcp", "--runs-dir", str(runs)],
        env=dict(os.environ), cwd=str(tmp_path),
    )  # fmt: skip
    async with Client(params) as client:
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        valid(await client.call_tool("describe_data", {"data": str(drop)}), tools["describe_data"])
        steps: list[float] = []

        async def progress(p: float, total: float | None, message: str | None) -> None:
            steps.append(p)

        args = {"metric": "revenue", "data": str(drop), "window": "7d"}
        report = valid(
            await client.call_tool("investigate", args, progress_callback=progress), tools["investigate"]
        )
        assert report["status"] == "concluded" and report["root_causes"] and steps
        assert (runs / report["run_id"] / "report.json").is_file()  # the server's --runs-dir
        listed = valid(await client.call_tool("list_runs", {}), tools["list_runs"])
        assert [r["run_id"] for r in listed["runs"]] == [report["run_id"]]


def test_the_server_never_runs_in_the_warm_helper() -> None:
    from investigator.front.entry import routed

    assert not routed(["mcp"]) and not routed(["--runs-dir", "r", "mcp", "--transport", "http"])
    assert routed(["--metric", "revenue"])


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, str]]:
    port, token = free_port(), "mcp-test-token-7"
    proc = subprocess.Popen(
        [sys.executable, "-m", "investigator", "mcp", "--transport", "http", "--port", str(port)],
        env={**os.environ, "INVESTIGATOR_MCP_TOKEN": token}, cwd=tmp_path,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/mcp"
    assert _until(lambda: _answers(port) or proc.poll() is not None, 60) and proc.poll() is None
    try:
        yield url, token
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def _answers(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.mark.anyio
async def test_over_http_the_token_is_required(http_server: tuple[str, str], drop: Path) -> None:
    url, token = http_server
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"},
    }
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    async with httpx.AsyncClient() as raw:
        assert (await raw.post(url, json=hello, headers=headers)).status_code == 401
        wrong = {**headers, "Authorization": "Bearer nope"}
        assert (await raw.post(url, json=hello, headers=wrong)).status_code == 401
        evil = {**headers, "Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
        assert (await raw.post(url, json=hello, headers=evil)).status_code == 403
        rebound = {**headers, "Authorization": f"Bearer {token}", "Host": "evil.example"}
        assert (await raw.post(url, json=hello, headers=rebound)).status_code == 421
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(60, read=None)
    )
    async with http, Client(streamable_http_client(url, http_client=http)) as client:  # type: ignore[arg-type]
        tools = {t.name: t.output_schema for t in (await client.list_tools()).tools}
        assert set(tools) == TOOLS
        d = valid(await client.call_tool("describe_data", {"data": str(drop)}), tools["describe_data"])
        assert d["time_column"] == "date"
        assert valid(await client.call_tool("list_runs", {}), tools["list_runs"])["runs"] == []
