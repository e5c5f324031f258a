"""Which queries may be sent to a source (issue 25): exactly one read-only SELECT, parsed in the
source's dialect. The engines themselves are in test_read_only.py."""

from __future__ import annotations

import pytest

from investigator.sources.readonly import dialect, query_refusal

READS = {
    "postgres": [
        "select * from sales where region = 'EU'",
        "select * from sales;",  # a trailing semicolon is one statement
        "with eu as (select * from sales where region = 'EU') select * from eu",
        "select date, revenue::numeric as revenue from sales union all select date, revenue from old_sales",
        "(select * from sales)",
        "select * from sales where note = 'x; drop table sales'",  # a semicolon inside a string
        "select * from sales -- ; drop table sales",  # ... or a comment
    ],
    "duckdb": ["from sales"],
    "sqlite": ["select * from sales where date >= '2026-01-01'"],
    "spark": ["select * from warehouse.sales"],
}
WRITES = {
    "postgres": [
        ("select * from sales; delete from keepme where x = 1", "holds 2 statements (SELECT; DELETE)"),
        ("select * from sales;; drop table keepme", "holds 2 statements (SELECT; DROP)"),
        ("delete from keepme", "is a DELETE statement"),
        ("with gone as (delete from keepme returning *) select * from gone", "contains DELETE"),
        ("with x as (insert into keepme values (1) returning *) select * from x", "contains INSERT"),
        ("select * into copy_of_sales from sales", "contains SELECT INTO"),
        ("select * from sales for update", "contains FOR UPDATE/SHARE"),
        ("select set_config('default_transaction_read_only', 'off', false)", "calls set_config()"),
        ("select * from sales where pg_catalog.set_config('a', 'b', false) = 'b'", "calls set_config()"),
        ("select dblink_exec('dbname=shop', 'delete from keepme')", "calls dblink_exec()"),
        ("select lo_export(1, '/tmp/out')", "calls lo_export()"),
        ("copy keepme to '/tmp/out.csv'", "is a COPY statement"),
        ("create table t as select * from sales", "is a CREATE statement"),
        ("set default_transaction_read_only = off", "is a SET statement"),
        ("begin", "is a TRANSACTION statement"),
        ("explain analyze delete from keepme", "is an EXPLAIN statement"),
        ("", "holds 0 statements"),
        ("select from where", "cannot be read as postgres at line 1"),
    ],
    "duckdb": [
        ("select * from sales; drop table keepme", "holds 2 statements (SELECT; DROP)"),
        ("attach 'other.ddb' as other", "is an ATTACH statement"),
        ("install httpfs", "is an INSTALL statement"),
        ("load httpfs", "is a LOAD statement"),
        ("pragma enable_checkpoint_on_shutdown", "is a PRAGMA statement"),
        ("copy sales to 'out.csv'", "is a COPY statement"),
    ],
    "sqlite": [
        ("attach 'x.db' as x", "is an ATTACH statement"),
        ("select load_extension('evil')", "calls load_extension()"),
    ],
}


@pytest.mark.parametrize(("backend", "sql"), [(b, q) for b, qs in READS.items() for q in qs])
def test_one_select_is_accepted(backend: str, sql: str) -> None:
    assert query_refusal(sql, dialect(backend)) is None


def test_the_owners_own_query_may_read_their_files() -> None:
    assert query_refusal("select * from read_parquet('more/*.parquet')", dialect("duckdb"), own=True) is None


@pytest.mark.parametrize(("backend", "sql", "why"), [(b, q, w) for b, qs in WRITES.items() for q, w in qs])
def test_anything_else_is_refused_in_one_line_that_says_what_to_do(backend: str, sql: str, why: str) -> None:
    message = query_refusal(sql, dialect(backend))
    assert message is not None and why in message, message
    assert message.startswith("--sql must be exactly one read-only SELECT, but it ")
    assert message.endswith("or save the query as a view in the database and pass --table <view>")
    assert "\n" not in message


def test_the_dialect_is_the_backends() -> None:
    assert [dialect(b) for b in ("postgres", "duckdb", "sqlite", "spark", "mssql", "nosuch")] == [
        "postgres", "duckdb", "sqlite", "spark", "tsql", None,
    ]  # fmt: skip
