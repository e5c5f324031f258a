"""Regression (issue 37, item 1): over `investigate mcp --transport http`, a token holder's `sql` on
an `env:VAR` connection called DuckDB's file readers (or PostgreSQL's `pg_read_file` as a
superuser) and got `/proc/self/environ` (the bearer token) or any file back, as data or inside the
driver's error. A query written by someone other than the process owner now reads only the
connection's own tables: file functions are refused by name, DuckDB is opened with external
access disabled and its configuration locked, and no driver message quotes a data value back.

Real parts: `investigate mcp` spawned over streamable HTTP with the official MCP client, a DuckDB
file, the throwaway PostgreSQL cluster with a superuser role."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

from investigator.errors import UserError
from investigator.sources import source_for
from investigator.sources.readonly import dialect, query_refusal
from investigator.sources.warehouse import connect
from tests.net import answers as listening
from tests.net import free_port, until

from ..conftest import write_synth
from .conftest import Postgres, load_postgres

TOKEN = "mcp-token-canary-91c4"
FILE_CANARY = "FILE-CANARY-5d1e"
PG_ADMIN = "postgres://admin:super-secret-admin@{host}:{port}/shop"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A DuckDB file with a sales table, and canary files beside it (text and CSV)."""
    import duckdb

    root = tmp_path_factory.mktemp("files")
    path, _ = write_synth(root, "segment_change", seed=3)
    db = root / "shop.duckdb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE sales AS SELECT * FROM read_parquet('{path}')")
    con.close()
    (root / "canary.txt").write_text(f"{FILE_CANARY}\n")
    (root / "canary.csv").write_text(f"date,region,revenue\n2026-01-01,{FILE_CANARY},1\n")
    return {"db": db, "txt": root / "canary.txt", "csv": root / "canary.csv", "root": root}


def duckdb_reads(files: dict[str, Path]) -> list[str]:
    txt, csv = files["txt"], files["csv"]
    return [
        "select * from read_text('/proc/self/environ')",
        "select cast(content as int) as revenue, date '2026-01-01' as date "
        "from read_text('/proc/self/environ')",
        f"select content as region, date '2026-01-01' as date, 1 as revenue from read_text('{txt}')",
        f"select cast(content as int) as revenue, date '2026-01-01' as date from read_text('{txt}')",
        f"select * from read_csv('{csv}')",
        f"select * from '{csv}'",
        f"select * from main.sales where region in (select column0 from read_csv_auto('{csv}'))",
        "select * from glob('/*')",
    ]


POSTGRES_READS = [
    "select pg_read_file('/proc/self/environ') as region, current_date as date, 1 as revenue",
    "select pg_catalog.pg_read_file('postgresql.conf') as region, current_date as date, 1 as revenue",
    "select name as region, current_date as date, 1 as revenue from pg_ls_dir('.') as name",
    "select (pg_stat_file('PG_VERSION')).size as revenue, current_date as date",
    "select lo_import('/proc/self/environ') as revenue, current_date as date",
    "select cast(string_agg(name, ',') as int) as revenue, current_date as date from pg_ls_dir('.') as name",
]


@pytest.mark.parametrize("sql", ["select pg_notify('ch', 'x')", "select pg_advisory_lock(1)",
                                 "select pg_cancel_backend(1)", "select purge_keepme()"])  # fmt: skip
def test_postgres_functions_are_allowed_by_list(sql: str) -> None:
    message = query_refusal(sql, dialect("postgres"))
    assert message is not None and "is not among the functions a read may call" in message
    assert "\n" not in message
    fine = "select date_trunc('day', d), sum(x), coalesce(y, 0) from t group by 1"
    assert query_refusal(fine, "postgres") is None


@pytest.mark.parametrize("name", ["read_text", "read_csv", "read_blob", "glob", "read_parquet", "read_json"])
def test_a_file_function_is_refused_in_one_line_naming_it_unless_the_owner_wrote_it(name: str) -> None:
    sql = f"select * from {name}('/etc/passwd')"
    message = query_refusal(sql, dialect("duckdb"))
    assert message is not None and f"calls {name}(), which reads files" in message and "\n" not in message
    assert query_refusal(sql, dialect("duckdb"), own=True) is None
    pg = query_refusal("select pg_ls_dir('.')", dialect("postgres"), own=True)
    assert pg is not None and "pg_ls_dir()" in pg  # the server's files are never the CLI user's own


def test_a_confined_duckdb_reads_no_file_even_past_the_name_check(planted: dict[str, Path]) -> None:
    """The engine is the second guard: a reader the name list missed, or SQL sent without the check,
    still reads nothing, and no statement turns external access back on."""
    con = connect(f"duckdb://{planted['db']}")
    assert int(con.raw_sql("select count(*) from sales").fetchone()[0]) > 0
    tries = [f"select * from read_text('{planted['txt']}')", f"select * from '{planted['csv']}'"]
    tries += ["set enable_external_access = true", "set lock_configuration = false", "install httpfs"]
    for sql in tries:
        with pytest.raises(Exception) as caught:
            con.raw_sql(sql).fetchall()
        assert FILE_CANARY not in str(caught.value)
    con.disconnect()


def test_the_owners_own_sql_may_read_files_but_no_error_quotes_a_value(planted: dict[str, Path]) -> None:
    url = f"duckdb://{planted['db']}"
    own = source_for(url, sql=f"select * from read_csv('{planted['csv']}')", own=True)
    assert len(own.open("date").to_pandas()) == 1
    own.close()
    cast = f"select cast(content as int) as x from read_text('{planted['txt']}')"
    bad = source_for(url, sql=cast, own=True)
    with pytest.raises(Exception) as caught:
        bad.open("date")
    assert FILE_CANARY not in str(caught.value) and "'…'" in str(caught.value)
    bad.close()
    theirs = source_for(url, sql=f"select * from read_csv('{planted['csv']}')")
    with pytest.raises(UserError, match=r"calls read_csv\(\), which reads files"):
        theirs.open("date")


# over HTTP, as a token holder ------------------------------------------------------------------
@pytest.fixture
def served(planted: dict[str, Path], tmp_path: Path) -> Iterator[str]:
    """`investigate mcp --transport http` with a DuckDB file (SHOP_DB) in its environment; its
    token is in its own /proc/self/environ."""
    env = {**os.environ, "INVESTIGATOR_MCP_TOKEN": TOKEN, "SHOP_DB": f"duckdb://{planted['db']}"}
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "investigator", "mcp", "--transport", "http", "--port", str(port)],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert until(lambda: listening(port) or proc.poll() is not None, 60) and proc.poll() is None
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


async def _asked(url: str, data: str, queries: list[str]) -> list[tuple[str, str]]:
    """Every answer (text and structured) to describe_data and investigate over each query."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    auth = {"Authorization": f"Bearer {TOKEN}"}
    http = httpx2.AsyncClient(headers=auth, timeout=httpx2.Timeout(120, read=None))
    out = []
    async with http, Client(streamable_http_client(url, http_client=http)) as client:
        for sql in queries:
            for tool, args in (("describe_data", {}), ("investigate", {"metric": "revenue", "window": "7d"})):
                result = await client.call_tool(tool, {"data": data, "sql": sql, **args})
                texts = [c.text for c in result.content if c.type == "text"]
                out.append((f"{tool}({sql})", " ".join(texts) + json.dumps(result.structured_content)))
    return out


@pytest.mark.anyio
@pytest.mark.long
async def test_an_http_client_reads_neither_environ_nor_a_file_through_duckdb(
    served: str, planted: dict[str, Path]
) -> None:
    answers = await _asked(served, "env:SHOP_DB", duckdb_reads(planted))
    leaked = [asked for asked, answer in answers if any(s in answer for s in (TOKEN, FILE_CANARY, "PATH="))]
    assert leaked == []
    for asked, answer in answers:
        assert "reads files" in answer or "reads a file" in answer, (asked, answer)


@pytest.fixture(scope="module")
def pg_shop(postgres: Postgres, planted: dict[str, Path]) -> Postgres:
    path = next(planted["root"].glob("*.parquet"))
    load_postgres(postgres, "sales", pd.read_parquet(path))
    return postgres


@pytest.mark.anyio
@pytest.mark.long
async def test_an_http_client_reads_no_server_file_through_postgres_as_superuser(
    pg_shop: Postgres, planted: dict[str, Path], tmp_path: Path
) -> None:
    env = {**os.environ, "INVESTIGATOR_MCP_TOKEN": TOKEN,
           "PG_SHOP": PG_ADMIN.format(host=pg_shop.host, port=pg_shop.port)}  # fmt: skip
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "investigator", "mcp", "--transport", "http", "--port", str(port)],
        env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        assert until(lambda: listening(port) or proc.poll() is not None, 60) and proc.poll() is None
        answers = await _asked(f"http://127.0.0.1:{port}/mcp", "env:PG_SHOP", POSTGRES_READS)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    secrets = ("PG_VERSION", "listen_addresses", "PGDATA", "PATH=", TOKEN, "super-secret-admin")
    leaked = [asked for asked, answer in answers if any(s in answer for s in secrets)]
    assert leaked == []
    for asked, answer in answers:
        assert "reads the server's files" in answer or "lo_import()" in answer, (asked, answer)


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_fifo_or_a_device_named_as_data_is_refused_not_read(tmp_path: Path, special: str) -> None:
    """Issue 37 (also tighten): a FIFO or /dev/zero named as data hung the run."""
    from investigator.errors import DataError

    path = Path(special)
    if special == "fifo":
        path = tmp_path / "data.csv"
        os.mkfifo(path)
    with pytest.raises(DataError, match="not a file"):
        source_for(str(path)).open("date")
