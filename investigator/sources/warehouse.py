"""A table or query in a database or cluster, reached through Ibis on the host.

Every question the investigation asks of it is a grouped aggregation the engine runs; the
connection (and its credentials) stays in this process and never reaches the kernel.
"""

from __future__ import annotations

import contextlib
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from investigator.analysis.queries import as_dates
from investigator.errors import DataError, UserError
from investigator.sources import readonly
from investigator.sources.urls import expand, redact, scheme, scrub

if TYPE_CHECKING:
    from ibis.expr.types import Table

# backend -> what to install when its driver is missing
EXTRAS = {
    "spark": 'pip install -e ".[spark]" (pyspark 4.0.x and Ibis\'s PySpark backend; needs Java 17)',
    "postgres": "pip install 'ibis-framework[postgres]'",
    "sqlite": "pip install 'ibis-framework[sqlite]'",
    "duckdb": "pip install 'ibis-framework[duckdb]'",
}
_UNREACHABLE = (
    "connection refused", "could not connect", "could not translate host", "name or service not known",
    "timeout expired", "timed out", "no route to host", "network is unreachable", "connection to server",
)  # fmt: skip
_CREDENTIALS = ("password authentication failed", "authentication failed", "access denied", "no password")
_PERMISSION = ("permission denied", "insufficient privilege", "not authorized", "access to table")
_MISSING = ("does not exist", "not found", "no such table", "cannot be found", "unknown table")
_SPARK_SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.showConsoleProgress": "false",
}
_SPARK_LOCAL = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


class WarehouseSource:
    """A table (`table`) or a query (`sql`) behind a connection URL (or `env:VAR` naming one)."""

    def __init__(self, data: str, table: str | None = None, sql: str | None = None) -> None:
        if bool(table) == bool(sql):
            raise UserError(
                f"{redact(data)} is a database: name the data with --table NAME or --sql 'select ...' "
                "(one of them)"
            )
        self.data, self.table, self.sql = data, table, sql
        self.notes: list[str] = []
        self._con: Any = None

    def describe(self) -> str:
        what = f"table {self.table}" if self.table else "a query"
        return f"{redact(self.data)} ({what})"

    def open(self, time_column: str) -> Table:
        """The table (or query) as an Ibis expression, its time column typed as dates."""
        url = expand(self.data)
        refused = readonly.query_refusal(self.sql, readonly.dialect(scheme(url))) if self.sql else None
        if refused is not None:
            raise UserError(refused)
        try:
            con = self._con = self._con or connect(url)
            table = self._source(con)
            if time_column in table.columns and not table[time_column].type().is_date():
                table = table.mutate(**{time_column: as_dates(table, time_column)})
            table.head(1).to_pandas()  # reach the server now, so a problem is reported here
        except UserError:
            raise
        except Exception as e:
            raise DataError(self._explain(e, url)) from None
        return table

    def close(self) -> None:
        """Let the connection go (a Spark session stays up for the next source in this process)."""
        con, self._con = self._con, None
        if con is not None and scheme(expand(self.data)) != "spark":
            with contextlib.suppress(Exception):
                con.disconnect()

    def _source(self, con: Any) -> Any:
        if self.sql:
            return _query(con, self.sql)
        name = self.table or ""
        if scheme(expand(self.data)) == "spark" and (
            "/" in name or name.endswith((".parquet", ".pq", ".csv"))
        ):
            return _spark_path(con, name)
        database, _, bare = name.rpartition(".")
        return con.table(bare, database=database) if database else con.table(bare)

    def _explain(self, error: BaseException, url: str) -> str:
        """One line that says what went wrong and what to do, never holding the password."""
        where, kind = redact(url), scheme(url)
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        text = first.lower()
        if isinstance(error, ModuleNotFoundError | ImportError):
            how = EXTRAS.get(kind, f"pip install 'ibis-framework[{kind}]'")
            message = f"the {kind} driver is not installed ({first}): {how}"
        elif any(k in text for k in _CREDENTIALS):
            message = f"bad credentials for {where}: check the user and password ({first})"
        elif any(k in text for k in _PERMISSION):
            message = f"no permission to read {self._what()} at {where}: ask for SELECT on it ({first})"
        elif "different configuration than existing connections" in text:
            message = (
                f"{where} is already open read-write in this process (another DuckDB connection): close "
                "that connection and run again; the investigator opens database files read-only"
            )
        elif any(k in text for k in _UNREACHABLE):
            message = f"cannot reach {where}: is the server up and the host and port right? ({first})"
        elif type(error).__name__ == "TableNotFound" or (self.table and any(k in text for k in _MISSING)):
            message = f"{self._what()} not found at {where} ({first})"
        else:
            message = f"cannot read {self._what()} at {where}: {first}"
        return scrub(message, url)

    def _what(self) -> str:
        return f"table {self.table}" if self.table else "the --sql query"


def connect(url: str) -> Any:
    """An Ibis connection for a URL: any backend `ibis.connect` knows, and `spark://MASTER`
    (`spark://local[2]`, or a cluster's master URL) through Ibis's PySpark backend. Postgres,
    DuckDB files and SQLite files are opened read-only (`readonly`); Spark has no such mode."""
    import ibis

    kind = scheme(url)
    if kind == "spark":
        return _spark(url)
    if kind == "postgres":
        timeout = {} if "connect_timeout" in url else {"connect_timeout": 10}
        return readonly.read_only_postgres(ibis.connect(url, **timeout))
    if kind == "duckdb" and readonly.duckdb_file(url):
        return ibis.connect(url, read_only=True)
    if kind == "sqlite":
        return readonly.connect_sqlite(url)
    return ibis.connect(url)


def _spark(url: str) -> Any:
    import ibis
    from pyspark.sql import SparkSession

    rest = url.split("://", 1)[1]
    master = rest if rest.startswith("local") else url  # spark://host:7077 is the master URL itself
    builder = SparkSession.builder.master(master).appName("investigator")
    local = _SPARK_LOCAL if master.startswith("local") else {}
    for key, value in {**_SPARK_SETTINGS, **local}.items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return ibis.pyspark.connect(session)


def _query(con: Any, sql: str) -> Any:
    """A query (checked: one read-only SELECT) as a table. Ibis 12 reads a query's schema through a
    temporary view, which a read-only Postgres session refuses: there the schema is read from the
    query itself, with no rows. Elsewhere, where `con.sql` fails (a DuckDB 2 cursor method is gone),
    a session-local temporary view of our own stands in (read-only DuckDB and SQLite allow those;
    nothing is written to the data); if that fails too, the first error is the one worth showing."""
    import sqlglot as sg

    if con.name == "postgres":
        return con.sql(sql, schema=_postgres_schema(con, sql))
    try:
        return con.sql(sql)
    except Exception as first:
        name = f"investigator_query_{uuid.uuid4().hex[:12]}"
        try:  # the parsed query, as Ibis sends it: never the text, which the engine might split
            body = sg.parse_one(sql, read=con.dialect).sql(con.dialect)
            con.raw_sql(f"CREATE TEMPORARY VIEW {name} AS {body}")
            return con.table(name)
        except Exception:
            raise first from None


def _postgres_schema(con: Any, sql: str) -> Any:
    """The query's columns and types, from running it for no rows (as Ibis will send it)."""
    import ibis
    import sqlglot as sg

    query: Any = sg.parse_one(sql, read=con.dialect)  # checked: a SELECT
    probe = sg.select("*").from_(query.subquery("q")).limit(0)
    with con.con.cursor() as cur, con.con.transaction():
        cur.execute(probe.sql(con.dialect))
        columns = [(c.name, c.type_display) for c in cur.description or []]
    mapper = con.compiler.type_mapper
    schema = {}
    for name, kind in columns:
        try:
            schema[name] = mapper.from_string(kind)
        except Exception:  # an enum or a domain: psycopg reads it as text
            schema[name] = ibis.dtype("string")
    return ibis.schema(schema)


def _spark_path(con: Any, path: str) -> Any:
    if (Path(path) / "_delta_log").is_dir():
        return con.read_delta(path)
    if path.endswith(".csv"):
        return con.read_csv(path)
    if not Path(path).exists() and "://" not in path:
        raise DataError(f"{path} does not exist (a --table for spark:// is a table name or a Parquet path)")
    return con.read_parquet(path)
