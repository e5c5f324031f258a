"""Only reads reach a database, twice over.

A query (`--sql`, or `sql:` in `configs/metrics.yaml` or a triage config) must be exactly one
read-only SELECT: parsed with sqlglot in the source's dialect, never matched as text. One statement;
a SELECT, UNION or WITH ... SELECT; nothing inside that writes or changes the session (INSERT in a
CTE, SELECT INTO, FOR UPDATE, COPY, ATTACH, INSTALL, PRAGMA, SET, ...), and none of the few functions
that step outside a read-only session (`set_config`, `dblink_exec`, `lo_export`, ...).

And every connection is opened read-only, so no query this tool sends can write even if the parse
were wrong: PostgreSQL sessions default to read-only transactions and psycopg begins each one READ
ONLY; DuckDB database files are opened `read_only`; SQLite files through a `mode=ro` URI. Spark is
exempt (a Spark session has no read-only mode): there the query check is the guard, as on other
backends Ibis reaches (MySQL, Trino, ...): give those a role that can only read.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from investigator.sources.urls import ENV_PREFIX, is_url, scheme

__all__ = [
    "config_query_refusal",
    "connect_sqlite",
    "database_path",
    "dialect",
    "duckdb_file",
    "query_refusal",
    "read_only_postgres",
]

# statements (or parts of one) that write, change the session or reach outside it
_WRITES = (
    "Insert", "Update", "Delete", "Merge", "Create", "Drop", "Alter", "TruncateTable", "Copy", "Attach",
    "Detach", "Install", "Pragma", "Set", "Use", "Transaction", "Commit", "Rollback", "Grant", "Revoke",
    "Comment", "Into", "Lock", "Cache", "Uncache", "Refresh", "Analyze", "Kill", "Export", "Put", "Declare",
    "Execute", "LoadData", "Command",
)  # fmt: skip
# functions that step outside a read-only session: change its settings (set_config could turn
# default_transaction_read_only off), open another connection, write files or sequences
_ESCAPES = {
    "set_config", "dblink", "dblink_exec", "dblink_connect", "dblink_open", "dblink_send_query",
    "lo_import", "lo_export", "lo_unlink", "lo_put", "lo_from_bytea", "pg_file_write", "pg_file_rename",
    "pg_file_unlink", "nextval", "setval", "load_extension", "pg_terminate_backend", "pg_reload_conf",
}  # fmt: skip
_DIALECTS = {"mssql": "tsql", "pyspark": "spark", "postgresql": "postgres"}
_UNREADABLE = "cannot be read as"


def dialect(backend: str) -> str | None:
    """The sqlglot dialect of a URL's backend (`postgres`, `duckdb`, ...), None if sqlglot has none."""
    import sqlglot

    name = _DIALECTS.get(backend, backend)
    return name if sqlglot.Dialect.get(name) is not None else None


def query_refusal(
    sql: str,
    dialect: str | None,
    where: str = "--sql",
    table: str = "pass --table <view>",
    *,
    known_dialect: bool = True,
) -> str | None:
    """Why `sql` may not be sent to a source, in one line that says what to do; None if it is one
    read-only SELECT. `where` and `table` name the flag or config key the query came from. Without
    `known_dialect` (a config whose source is `env:VAR`), SQL that cannot be parsed passes here: it
    is checked again, strictly, in the source's own dialect before anything is sent."""
    problem = _problem(sql, dialect)
    if problem is None or (not known_dialect and problem.startswith(_UNREADABLE)):
        return None
    return (
        f"{where} must be exactly one read-only SELECT, but it {problem}: keep only the SELECT (WITH ... "
        f"SELECT and UNION are fine), or save the query as a view in the database and {table}"
    ).lstrip()


def config_query_refusal(sql: str, data: str | None, where: str) -> str | None:
    """`query_refusal` for `sql:` in a config, in the dialect of its `data` when that is a URL."""
    known = data is not None and is_url(data) and not data.startswith(ENV_PREFIX)
    name = dialect(scheme(data)) if known and data else None
    return query_refusal(sql, name, where, "set table: <view>", known_dialect=name is not None)


def _problem(sql: str, dialect: str | None) -> str | None:
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, SqlglotError

    quiet = logging.getLogger("sqlglot")  # it warns on stderr when it falls back to a Command
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except ParseError as e:
        first = e.errors[0] if e.errors else {}
        where = f" at line {first.get('line')}, column {first.get('col')}" if first else ""
        return f"{_UNREADABLE} {dialect or 'SQL'}{where} ({first.get('description', 'parse error')})"
    except SqlglotError as e:
        return f"{_UNREADABLE} {dialect or 'SQL'} ({str(e).splitlines()[0][:120]})"
    finally:
        quiet.setLevel(level)
    if len(statements) != 1:
        kinds = "; ".join(_kind(s) for s in statements) or "nothing"
        return f"holds {len(statements)} statements ({kinds})"
    root = statements[0]
    if not isinstance(root, exp.Query):
        kind = _kind(root)
        return f"is {'an' if kind[0] in 'AEIOU' else 'a'} {kind} statement"
    writes = tuple(getattr(exp, name) for name in _WRITES if hasattr(exp, name))
    for node in root.walk():
        if isinstance(node, writes):
            return f"contains {_kind(node)}"
        if isinstance(node, exp.Func):
            name = (node.this if isinstance(node, exp.Anonymous) else node.sql_name()).lower()
            if name in _ESCAPES:
                return f"calls {name}(), which can act outside a read-only session"
    return None


def _kind(node: Any) -> str:
    """What a statement or clause is, in SQL's words: DELETE, INSERT, SELECT INTO, FOR UPDATE, ..."""
    from sqlglot import exp

    if isinstance(node, exp.Command):
        return str(node.this).upper()
    if isinstance(node, exp.Into):
        return "SELECT INTO"
    if isinstance(node, exp.Lock):
        return "FOR UPDATE/SHARE"
    return str(node.key).upper().replace("TRUNCATETABLE", "TRUNCATE")


# opening read-only ----------------------------------------------------------------------------
def read_only_postgres(con: Any) -> Any:
    """Make an Ibis Postgres connection read-only: the session's transactions default to read-only
    (which `set_config`, refused in queries, could otherwise undo), and psycopg begins every
    transaction it opens READ ONLY (which SQL cannot undo from inside)."""
    raw = con.con
    with raw.cursor() as cur:
        cur.execute("SET default_transaction_read_only = on")
    raw.read_only = True
    return con


def database_path(url: str) -> Path | None:
    """The file a `duckdb://` or `sqlite://` URL names (as Ibis reads it), None for in-memory."""
    parts = urlsplit(url)
    named = [p for p in (parts.netloc, parts.path[bool(parts.netloc) :]) if p]
    if not named or named == [":memory:"]:
        return None
    return Path(*named).absolute()


def duckdb_file(url: str) -> bool:
    """Whether a `duckdb://` URL names a database file (not memory, not MotherDuck)."""
    path = database_path(url)
    return path is not None and not url.split("://", 1)[1].startswith(("md:", "motherduck:"))


def connect_sqlite(url: str) -> Any:
    """An Ibis SQLite connection, read-only for a file (a missing file is an error, not created)."""
    import ibis

    path = database_path(url)
    if path is None:
        return ibis.sqlite.connect()
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"  # resolved: `sqlite:////x` reads as //x
    return ibis.sqlite.from_connection(sqlite3.connect(uri, uri=True))
