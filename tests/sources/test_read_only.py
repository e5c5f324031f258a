"""Regression (issue 25): `--sql "select * from sales; delete from keepme where x = 1"` deleted a
row on PostgreSQL, and `...; drop table keepme` dropped a table in a DuckDB file. A query must now be
one read-only SELECT (one line, exit 2, before anything is sent), and every source is opened
read-only besides, so even a SELECT that writes through a function cannot. Real engines: the
throwaway PostgreSQL cluster, DuckDB and SQLite files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from investigator.errors import UserError
from investigator.sources.warehouse import connect

from ..conftest import cli, write_synth
from .conftest import CANARY, Postgres, _admin, load_duckdb, load_postgres, load_sqlite
from .test_engines import run

STACKED = "select * from {sales}; delete from keepme where x = 1"
DROPPED = "select * from {sales}; drop table keepme"


@pytest.fixture(scope="module")
def sales(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path, _ = write_synth(tmp_path_factory.mktemp("ro"), "segment_change", seed=3)
    return path


@pytest.fixture(scope="module")
def shop(postgres: Postgres, sales: Path) -> Postgres:
    """sales_ro to read; keepme, which the analyst may write (so only read-only opening stops
    a write), and a function that deletes from it."""
    load_postgres(postgres, "sales_ro", pd.read_parquet(sales))
    with _admin(postgres, "shop") as cur:
        cur.execute("DROP TABLE IF EXISTS keepme CASCADE")
        cur.execute("CREATE TABLE keepme (x int)")
        cur.execute("GRANT ALL ON keepme TO analyst")
        cur.execute(
            "CREATE OR REPLACE FUNCTION purge_keepme() RETURNS int LANGUAGE sql AS "
            "$$ DELETE FROM keepme WHERE x = 1 RETURNING 1 $$"
        )
    return postgres


@pytest.fixture
def kept(shop: Postgres) -> Any:
    """Two rows in keepme; yields a function counting them."""
    with _admin(shop, "shop") as cur:
        cur.execute("TRUNCATE keepme")
        cur.execute("INSERT INTO keepme VALUES (1), (2)")

    def rows() -> int:
        with _admin(shop, "shop") as cur:
            return int(cur.execute("SELECT count(*) FROM keepme").fetchone()[0])

    return rows


@pytest.fixture
def duckdb_file(tmp_path: Path, sales: Path) -> Path:
    import duckdb

    path = tmp_path / "shop.ddb"
    load_duckdb(path, "sales", sales)
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE keepme AS SELECT 1 AS x UNION ALL SELECT 2")
    con.close()
    return path


@pytest.fixture
def sqlite_file(tmp_path: Path, sales: Path) -> Path:
    import sqlite3

    path = tmp_path / "shop.db"
    load_sqlite(path, "sales", pd.read_parquet(sales))
    con = sqlite3.connect(path)
    con.executescript("CREATE TABLE keepme (x int); INSERT INTO keepme VALUES (1), (2);")
    con.close()
    return path


def duckdb_rows(path: Path) -> int:
    import duckdb

    con = duckdb.connect(str(path), read_only=True)
    try:
        return int(con.execute("SELECT count(*) FROM keepme").fetchone()[0])  # type: ignore[index]
    finally:
        con.close()


def by_cli(tmp_path: Path, data: str, *args: str) -> subprocess.CompletedProcess[str]:
    return cli("--data", data, "--metric", "revenue", "--runs-dir", str(tmp_path / "runs"), *args)


def one_line_refusal(r: subprocess.CompletedProcess[str], tmp_path: Path) -> str:
    """The command failed as a user error should: exit 2, one line, no password, no run left."""
    assert r.returncode == 2, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert CANARY not in r.stderr + r.stdout
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    return r.stderr.strip()


# the query check -------------------------------------------------------------------------------
def test_stacked_statements_in_sql_delete_no_row_on_postgres(
    shop: Postgres, kept: Any, tmp_path: Path
) -> None:
    r = by_cli(tmp_path, shop.url(), "--sql", STACKED.format(sales="sales_ro"))
    assert kept() == 2
    message = one_line_refusal(r, tmp_path)
    assert "--sql must be exactly one read-only SELECT, but it holds 2 statements (SELECT; DELETE)" in message


def test_stacked_statements_in_sql_drop_no_table_in_a_duckdb_file(duckdb_file: Path, tmp_path: Path) -> None:
    r = by_cli(tmp_path, f"duckdb:///{duckdb_file}", "--sql", DROPPED.format(sales="sales"))
    assert duckdb_rows(duckdb_file) == 2
    assert "holds 2 statements (SELECT; DROP)" in one_line_refusal(r, tmp_path)


def test_stacked_statements_in_sql_are_refused_on_sqlite(sqlite_file: Path, tmp_path: Path) -> None:
    r = by_cli(tmp_path, f"sqlite:///{sqlite_file}", "--sql", DROPPED.format(sales="sales"))
    assert "holds 2 statements (SELECT; DROP)" in one_line_refusal(r, tmp_path)


def test_set_config_cannot_turn_the_read_only_session_off(shop: Postgres, kept: Any, tmp_path: Path) -> None:
    sql = "select * from sales_ro where set_config('default_transaction_read_only', 'off', false) = 'off'"
    with pytest.raises(UserError, match=r"calls set_config\(\)"):
        run("revenue", shop.url(), tmp_path / "runs", sql=sql)


# opening read-only -----------------------------------------------------------------------------
def test_a_select_that_writes_through_a_function_cannot_write_on_postgres(
    shop: Postgres, kept: Any, tmp_path: Path
) -> None:
    """The query check refuses a function it does not list (issue 37: allowed by list, not by
    exception); and the read-only session stops it even when sent past the check."""
    with pytest.raises(UserError, match=r"calls purge_keepme\(\), which is not among") as e:
        run("revenue", shop.url(), tmp_path / "runs", sql="select s.*, purge_keepme() as p from sales_ro s")
    assert e.value.exit_code == 2 and CANARY not in str(e.value)
    con = connect(shop.url())
    try:
        with pytest.raises(Exception, match="read-only transaction"):
            con.raw_sql("select purge_keepme()")
    finally:
        con.disconnect()
    assert kept() == 2


def test_every_postgres_connection_is_read_only(shop: Postgres, kept: Any) -> None:
    con = connect(shop.url())
    try:
        with pytest.raises(Exception, match="read-only transaction"):
            con.raw_sql("DELETE FROM keepme")  # outside a transaction block: the session's default
        with pytest.raises(Exception, match="read-only transaction"), con.begin() as cur:
            cur.execute("DELETE FROM keepme")  # inside one: psycopg began it READ ONLY
    finally:
        con.disconnect()
    assert kept() == 2


def test_every_duckdb_file_connection_is_read_only(duckdb_file: Path) -> None:
    con = connect(f"duckdb:///{duckdb_file}")
    with pytest.raises(Exception, match="read-only"):
        con.raw_sql("DROP TABLE keepme")
    con.disconnect()
    assert duckdb_rows(duckdb_file) == 2


def test_every_sqlite_file_connection_is_read_only(sqlite_file: Path) -> None:
    import sqlite3

    con = connect(f"sqlite:///{sqlite_file}")
    with pytest.raises(Exception, match="readonly database"):
        con.raw_sql("DELETE FROM keepme")
    con.disconnect()
    assert sqlite3.connect(sqlite_file).execute("SELECT count(*) FROM keepme").fetchone() == (2,)


def test_a_mistyped_sqlite_path_creates_no_empty_database(tmp_path: Path) -> None:
    missing = tmp_path / "shpo.db"
    with pytest.raises(UserError):
        run("revenue", f"sqlite:///{missing}", tmp_path / "runs", table="sales")
    assert not missing.exists()


# legitimate reads still work -------------------------------------------------------------------
def test_a_query_still_reads_on_every_engine(
    shop: Postgres, duckdb_file: Path, sqlite_file: Path, tmp_path: Path
) -> None:
    sql = "with s as (select * from {t}) select * from s where revenue >= 0"
    found = [
        run("revenue", url, tmp_path / "runs", sql=sql.format(t=t)).root_causes[0].segment
        for url, t in (
            (shop.url(), "sales_ro"),
            (f"duckdb:///{duckdb_file}", "sales"),
            (f"sqlite:///{sqlite_file}", "sales"),
        )
    ]
    assert found == [{"country": "JP"}] * 3


def test_a_duckdb_file_another_process_reads_can_be_read(duckdb_file: Path, tmp_path: Path) -> None:
    """Two readers share a DuckDB file (a read-write opener would have been refused its lock)."""
    code = (
        "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True); "
        "print('ready', flush=True); time.sleep(120)"
    )
    other = subprocess.Popen(
        [sys.executable, "-c", code, str(duckdb_file)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "ready"
        report = run("revenue", f"duckdb:///{duckdb_file}", tmp_path / "runs", table="sales")
        assert report.root_causes[0].segment == {"country": "JP"}
    finally:
        other.kill()
        other.communicate()  # waits for it and closes its pipe


def test_a_duckdb_file_open_for_writing_in_this_process_says_what_to_do(
    duckdb_file: Path, tmp_path: Path
) -> None:
    import duckdb

    mine = duckdb.connect(str(duckdb_file))  # a notebook's own connection
    try:
        with pytest.raises(UserError, match="already open read-write in this process") as e:
            run("revenue", f"duckdb:///{duckdb_file}", tmp_path / "runs", table="sales")
        assert "close" in str(e.value) and "\n" not in str(e.value)
    finally:
        mine.close()


# the same check on sql: in configs ---------------------------------------------------------------
def test_sql_in_metrics_yaml_drops_no_table(duckdb_file: Path, tmp_path: Path) -> None:
    """A colleague's metrics.yaml runs with your credentials: its query is checked on load."""
    conf = tmp_path / "configs"
    conf.mkdir()
    body = {"expression": "revenue", "data": f"duckdb:///{duckdb_file}", "sql": DROPPED.format(sales="sales")}
    (conf / "metrics.yaml").write_text(yaml.safe_dump({"metrics": {"rev": body}}))
    r = cli(
        "--metric", "rev", "--runs-dir", str(tmp_path / "runs"), env={"INVESTIGATOR_CONFIG_DIR": str(conf)}
    )
    assert duckdb_rows(duckdb_file) == 2
    message = one_line_refusal(r, tmp_path)
    assert (
        f"{conf / 'metrics.yaml'}: metric 'rev' is malformed: sql must be exactly one read-only SELECT"
        in message
    )
    assert "holds 2 statements (SELECT; DROP)" in message and message.endswith("set table: <view>")


def test_sql_in_metrics_yaml_behind_an_env_url_is_checked_on_load(tmp_path: Path) -> None:
    conf = tmp_path / "configs"
    conf.mkdir()
    body = {"expression": "revenue", "data": "env:SHOP_DB_URL", "sql": STACKED.format(sales="sales")}
    (conf / "metrics.yaml").write_text(yaml.safe_dump({"metrics": {"rev": body}}))
    r = cli(
        "--metric", "rev", "--runs-dir", str(tmp_path / "runs"), env={"INVESTIGATOR_CONFIG_DIR": str(conf)}
    )
    assert "metric 'rev' is malformed: sql must be exactly one" in one_line_refusal(r, tmp_path)
