"""An aggregate's answer on the host as Arrow, the fastest way each engine gives it.

Ibis fetches PostgreSQL answers through a named (server-side) cursor, on which PostgreSQL plans
no parallel workers, and PySpark answers through `toPandas`. Here a PostgreSQL query runs on a plain
cursor (parallel where the server allows) and its rows become Arrow columns in chunks; a Spark query
comes back with `toArrow`. Every other engine goes through Ibis's own `to_pyarrow`. Each query is
logged (`querylog`).
"""

from __future__ import annotations

import time
from typing import Any

import pyarrow as pa

from investigator.sources import querylog

CHUNK = 100_000  # rows turned into Arrow at a time: the host never holds the answer as tuples whole


def arrow(expr: Any, limit: int | None = None) -> pa.Table:
    """`expr` (an Ibis table expression) run by its engine, as an Arrow table of its schema."""
    con = expr._find_backend(use_default=True)
    name = getattr(con, "name", "")
    if name not in ("postgres", "pyspark"):
        result: pa.Table = expr.to_pyarrow(limit=limit)
        return result
    sql = str(con.compile(expr, limit=limit))
    schema = expr.schema().to_pyarrow()
    started = time.perf_counter()
    got = _postgres(con, sql, schema) if name == "postgres" else _spark(con, sql, schema)
    querylog.record(sql, time.perf_counter() - started, got.num_rows)
    return got


def _postgres(con: Any, sql: str, schema: pa.Schema) -> pa.Table:
    batches = []
    with con.con.cursor() as cur, con.con.transaction():
        cur.execute(sql)
        while rows := cur.fetchmany(CHUNK):
            columns = list(zip(*rows, strict=True))
            batches.append(
                pa.record_batch(
                    [_column(c, f.type) for c, f in zip(columns, schema, strict=True)], schema=schema
                )
            )
    return pa.Table.from_batches(batches, schema=schema)


def _column(values: tuple[Any, ...], kind: pa.DataType) -> pa.Array:
    try:
        return pa.array(values, type=kind)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # a numeric (Decimal) where Ibis said a float
        return pa.array(values).cast(kind)


def _spark(con: Any, sql: str, schema: pa.Schema) -> pa.Table:
    got = con._session.sql(sql).toArrow()
    return got.rename_columns(schema.names).cast(schema)
