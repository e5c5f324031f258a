"""A table or query in a database or cluster, reached through Ibis on the host.

Every question the investigation asks of it is a grouped aggregation the engine runs; the
connection (and its credentials) stays in this process and never reaches the kernel.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from investigator.analysis.reading import TimeColumnError, dated
from investigator.errors import DataError, UserError
from investigator.sources import querylog, readonly
from investigator.sources.quoted import without_values
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
# what a driver's first line says, checked in this order: the most specific cause first (a
# PostgreSQL refusal arrives inside "connection to server ... failed: FATAL: ...")
_NO_DATABASE = re.compile(
    r'database(?: "(?P<name>[^"]*)")? does not exist|(?P<file>unable to open database file)', re.I
)
_ROLE = re.compile(r'role "(?P<name>[^"]*)" does not exist|no pg_hba\.conf entry', re.I)
_CREDENTIALS = ("password authentication failed", "authentication failed", "access denied", "no password")
_NO_HOST = ("could not translate host", "failed to resolve host", "name or service not known",
            "nodename nor servname", "temporary failure in name resolution")  # fmt: skip
_REFUSED = ("connection refused",)
_TIMEOUT = ("timeout expired", "timed out", "no route to host", "network is unreachable")
_UNREACHABLE = ("could not connect", "connection to server")
_PERMISSION = ("permission denied", "insufficient privilege", "not authorized", "access to table")
_MISSING = ("does not exist", "not found", "no such table", "cannot be found", "unknown table")
_SPARK_SETTINGS = {
    "spark.ui.enabled": "false",
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.ui.showConsoleProgress": "false",
    "spark.log.level": "ERROR",  # Spark 3.5+: setLogLevel at start-up
    "spark.sql.execution.arrow.pyspark.enabled": "true",  # answers reach Python as Arrow, not pickles
}
_SPARK_LOCAL = {"spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}


class WarehouseSource:
    """A table (`table`) or a query (`sql`) behind a connection URL (or `env:VAR` naming one).
    `own`: the table or query is the process owner's own (the CLI's), and a query may read their
    files; any other (a config's, an HTTP client's) reads only the connection's own tables, DuckDB
    confined (`readonly`): every source of one process alike, since DuckDB opens a file with one
    configuration per process (a triage job reads one file through a table and a query at once)."""

    def __init__(
        self, data: str, table: str | None = None, sql: str | None = None, *, own: bool = False
    ) -> None:
        if bool(table) == bool(sql):
            raise UserError(
                f"{redact(data)} is a database: name the data with --table NAME or --sql 'select ...' "
                "(one of them)"
            )
        self.data, self.table, self.sql = data, table, sql
        self.own = own
        self.notes: list[str] = []
        self._con: Any = None

    def describe(self) -> str:
        what = f"table {self.table}" if self.table else "a query"
        return f"{redact(self.data)} ({what})"

    def open(self, time_column: str) -> Table:
        """The table (or query) as an Ibis expression, its time column typed as dates."""
        url = expand(self.data)
        dialect = readonly.dialect(scheme(url))
        refused = readonly.query_refusal(self.sql, dialect, own=self.own) if self.sql else None
        if refused is not None:
            raise UserError(refused)
        try:
            con = self._con = self._con or _connected(url, confined=not self.own)
            table = self._source(con)
            if time_column in table.columns and not table[time_column].type().is_date():
                table = dated(table, time_column)
            table.head(1).to_pandas()  # reach the server now, so a problem is reported here
        except UserError:
            raise
        except TimeColumnError as e:
            raise DataError(str(e)) from None
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
        """One line that names what went wrong (from the driver's own words) and what to do, never
        holding the password: the driver's text is scrubbed, the URL shown redacted."""
        where, kind = redact(self.data), scheme(url)  # `env:VAR` as written: no user, host or database
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        text, said = first.lower(), without_values(scrub(first, url), [self.sql, self.table, where])
        if isinstance(error, ModuleNotFoundError | ImportError):
            how = EXTRAS.get(kind, f"pip install 'ibis-framework[{kind}]'")
            return f"the {kind} driver is not installed ({said}): {how}"
        if "different configuration than existing connections" in text:
            return (
                f"{where} is already open read-write in this process (another DuckDB connection): close "
                "that connection and run again; the investigator opens database files read-only"
            )
        if (missing := _missing_database(first, url, named=where == redact(url))) is not None:
            what = "path" if "file" in missing else "database name"
            return f"{missing} at {where}: check the {what} in the URL ({said})"
        if (role := _ROLE.search(first)) is not None:
            who = (
                f"role {role['name']}"
                if role["name"] and where == redact(url)
                else "this user, host and database"
            )
            return (
                f"bad credentials for {where}: the server refuses {who}: check the user in the URL ({said})"
            )
        if any(k in text for k in _CREDENTIALS):
            return f"bad credentials for {where}: the server refused the user or password ({said})"
        if any(k in text for k in _PERMISSION):
            return f"no permission to read {self._what()} at {where}: ask for SELECT on it ({said})"
        if any(k in text for k in _NO_HOST):
            return (
                f"cannot reach {where}: the host name is not known (DNS): check the host in the URL ({said})"
            )
        if any(k in text for k in _REFUSED):
            return (
                f"cannot reach {where}: nothing listens there: is the server up and the port right? ({said})"
            )
        if any(k in text for k in _TIMEOUT):
            return (
                f"cannot reach {where}: no answer in time: check the host, the port and any firewall ({said})"
            )
        if any(k in text for k in _UNREACHABLE):
            return f"cannot reach {where}: {said}"
        if type(error).__name__ == "TableNotFound" or (self.table and any(k in text for k in _MISSING)):
            return f"{self._what()} not found at {where} ({said})"
        return f"cannot read {self._what()} at {where}: {said}"

    def _what(self) -> str:
        return f"table {self.table}" if self.table else "the --sql query"


def _missing_database(first: str, url: str, named: bool = True) -> str | None:
    """ "database X does not exist" (or "no database file") when the driver says so, else None;
    without `named` (an `env:VAR` URL) the database is not named."""
    found = _NO_DATABASE.search(first)
    if found is None:
        return None
    if scheme(url) in ("duckdb", "sqlite"):
        path = readonly.database_path(url)
        return None if path is not None and path.exists() else "no database file"
    return (
        f"database {found['name'] if named else ''} does not exist".replace("  ", " ")
        if found["name"]
        else None
    )


def _connected(url: str, confined: bool = True) -> Any:
    """A logged connection (`querylog`): how long connecting took, and every query after."""
    started = time.perf_counter()
    con = connect(url, confined)
    querylog.note("connect", time.perf_counter() - started)
    return querylog.logged(con)


def connect(url: str, confined: bool = True) -> Any:
    """An Ibis connection for a URL: any backend `ibis.connect` knows, and `spark://MASTER`
    (`spark://local[2]`, or a cluster's master URL) through Ibis's PySpark backend. Postgres,
    DuckDB files and SQLite files are opened read-only (`readonly`); Spark has no such mode.
    `confined` (unless the process owner wrote the query): DuckDB reads no file but its own."""
    import ibis

    kind = scheme(url)
    if kind == "spark":
        return _spark(url)
    if kind == "postgres":
        timeout = {} if "connect_timeout" in url else {"connect_timeout": 10}
        return readonly.read_only_postgres(ibis.connect(url, **timeout))
    if kind == "duckdb" and confined:
        return readonly.connect_confined_duckdb(url)
    if kind == "duckdb" and readonly.duckdb_file(url):
        return ibis.connect(url, read_only=True)
    if kind == "sqlite":
        return readonly.connect_sqlite(url)
    return ibis.connect(url)


def _spark(url: str) -> Any:
    """A session through Ibis's PySpark backend, quiet and (in local mode) on loopback.

    The first session of the process starts Spark's JVM: its stderr (the JDK's incubator notice,
    log4j's start-up lines, Hadoop's native-library warning) goes to `spark_log()`, never to the
    user's terminal; later messages are at ERROR (`spark.log.level`). A `local[N]` master binds the
    driver to 127.0.0.1 unless SPARK_LOCAL_IP names another address."""
    import ibis
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway
    from pyspark.sql import SparkSession

    rest = url.split("://", 1)[1]
    master = rest if rest.startswith("local") else url  # spark://host:7077 is the master URL itself
    local = master.startswith("local") and not os.environ.get("SPARK_LOCAL_IP")
    settings = {**_SPARK_SETTINGS, **(_SPARK_LOCAL if local else {})}
    conf = SparkConf().setMaster(master).setAppName("investigator").setAll(list(settings.items()))
    with SparkContext._lock:  # the JVM is started once per process: here, with its stderr to a file
        if SparkContext._gateway is None:
            with spark_log().open("ab") as log, _environ({"SPARK_LOCAL_IP": "127.0.0.1"} if local else {}):
                SparkContext._gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})  # type: ignore[no-untyped-call]
            SparkContext._jvm = SparkContext._gateway.jvm
    session = SparkSession.builder.config(conf=conf).getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return ibis.pyspark.connect(session)


def spark_log() -> Path:
    """Where this process's Spark JVM writes what it prints (in the temporary directory)."""
    return Path(tempfile.gettempdir()) / f"investigator-spark-{os.getpid()}.log"


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    """`os.environ` with `values` set while the JVM is launched (it copies the environment)."""
    before = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, old in before.items():
            if old is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = old


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
