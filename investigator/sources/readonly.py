"""Only reads reach a database, twice over.

A query (`--sql`, or `sql:` in `configs/metrics.yaml` or a triage config) must be exactly one
read-only SELECT: parsed with sqlglot in the source's dialect, never matched as text. One statement;
a SELECT, UNION or WITH ... SELECT; nothing inside that writes or changes the session (INSERT in a
CTE, SELECT INTO, FOR UPDATE, COPY, ATTACH, INSTALL, PRAGMA, SET, ...), and none of the few functions
that step outside a read-only session (`set_config`, `dblink_exec`, `lo_export`, ...). On
PostgreSQL a function is allowed by list (`POSTGRES_FUNCTIONS`), not by exception: `pg_notify`,
`pg_advisory_lock` or `pg_cancel_backend` act on the server however read-only the session is.

A query written by someone other than the person who started the process (an HTTP client of
`investigate mcp`, a triage config's or a metric definition's `sql:`) reads only the connection's
own tables: a call of a file or directory function of any engine (`FILE_FUNCTIONS`: DuckDB's
`read_text`, `read_csv`, `glob`, ...; PostgreSQL's `pg_read_file`, `pg_ls_dir`, ...) is refused in
one line naming it, and DuckDB is opened with external access disabled and its configuration
locked (`confine_duckdb`), so a reader the list misses (or a path written as a table) fails in the
engine too. The CLI user's own `--sql` may still read their own files (`read_parquet('more/*')`).

And every connection is opened read-only, so no query this tool sends can write even if the parse
were wrong: PostgreSQL sessions default to read-only transactions and psycopg begins each one READ
ONLY; DuckDB database files are opened `read_only`; SQLite files through a `mode=ro` URI. Spark is
exempt (a Spark session has no read-only mode): there the query check is the guard, as on other
backends Ibis reaches (MySQL, Trino, ...): give those a role that can only read.
"""

from __future__ import annotations

import functools
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from investigator.limits import too_deep
from investigator.sources.urls import ENV_PREFIX, is_url, scheme

__all__ = [
    "FILE_FUNCTIONS",
    "POSTGRES_FUNCTIONS",
    "config_query_refusal",
    "connect_confined_duckdb",
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
# functions that read or list files and directories (or other databases), in every engine's words
FILE_FUNCTIONS = frozenset({
    # DuckDB (and its extensions)
    "read_text", "read_blob", "read_csv", "read_csv_auto", "read_parquet", "parquet_scan", "read_json",
    "read_json_auto", "read_json_objects", "read_json_objects_auto", "read_ndjson", "read_ndjson_auto",
    "read_ndjson_objects", "glob", "parquet_metadata", "parquet_schema", "parquet_file_metadata",
    "parquet_kv_metadata", "parquet_bloom_probe", "sniff_csv", "read_xlsx", "read_avro", "st_read",
    "iceberg_scan", "iceberg_metadata", "iceberg_snapshots", "delta_scan", "sqlite_scan", "sqlite_attach",
    "postgres_scan", "postgres_scan_pushdown", "postgres_attach", "postgres_query", "postgres_execute",
    "mysql_scan", "mysql_query", "mysql_execute", "getenv", "duckdb_secrets", "query_table", "query",
    "read_file", "read_files", "load_extension", "readfile", "writefile", "edit", "fsdir",
    # PostgreSQL
    "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "pg_stat_file", "pg_ls_logdir", "pg_ls_waldir",
    "pg_ls_tmpdir", "pg_ls_archive_statusdir", "pg_ls_logicalsnapdir", "pg_ls_logicalmapdir",
    "pg_ls_replslotdir", "pg_current_logfile", "lo_import", "lo_export", "lo_get", "lo_open", "loread",
})  # fmt: skip
# PostgreSQL functions a read of the connection's tables may call; any other is refused by name
POSTGRES_FUNCTIONS = frozenset({
    # aggregates and windows
    "count", "sum", "avg", "min", "max", "stddev", "stddev_pop", "stddev_samp", "variance", "var_pop",
    "var_samp", "bool_and", "bool_or", "every", "string_agg", "array_agg", "json_agg", "jsonb_agg",
    "json_object_agg", "jsonb_object_agg", "percentile_cont", "percentile_disc", "mode", "corr",
    "covar_pop", "covar_samp", "regr_slope", "regr_intercept", "regr_count", "regr_r2", "regr_avgx",
    "regr_avgy", "bit_and", "bit_or", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist",
    "ntile", "lag", "lead", "first_value", "last_value", "nth_value", "grouping",
    # numbers
    "abs", "ceil", "ceiling", "floor", "round", "trunc", "sign", "sqrt", "cbrt", "exp", "ln", "log",
    "log10", "power", "pow", "mod", "div", "pi", "degrees", "radians", "width_bucket", "greatest",
    "least", "to_number", "to_char", "scale", "gcd", "lcm", "factorial", "isnan",
    # text
    "lower", "upper", "length", "char_length", "character_length", "octet_length", "bit_length",
    "substr", "substring", "left", "right", "trim", "btrim", "ltrim", "rtrim", "lpad", "rpad", "replace",
    "split_part", "concat", "concat_ws", "position", "strpos", "initcap", "reverse", "repeat",
    "regexp_replace", "regexp_match", "regexp_matches", "regexp_like", "regexp_count", "regexp_substr",
    "regexp_split_to_array", "translate", "md5", "starts_with", "ascii", "chr", "format", "quote_ident",
    "quote_literal", "quote_nullable", "string_to_array", "array_to_string", "unaccent", "encode",
    "decode", "sha256", "to_hex",
    # dates and times
    "date_trunc", "date_part", "extract", "now", "current_date", "current_timestamp", "localtimestamp",
    "age", "make_date", "make_time", "make_timestamp", "make_timestamptz", "make_interval", "date_bin",
    "justify_days", "justify_hours", "justify_interval", "timezone", "isfinite", "to_date",
    "to_timestamp", "date", "date_add", "date_subtract", "statement_timestamp", "transaction_timestamp",
    # conditionals, casts, JSON, arrays, sets
    "coalesce", "nullif", "cast", "try_cast", "if", "json_extract_path", "json_extract_path_text",
    "jsonb_extract_path", "jsonb_extract_path_text", "json_build_object", "jsonb_build_object",
    "json_build_array", "jsonb_build_array", "to_json", "to_jsonb", "json_array_length",
    "jsonb_array_length", "json_typeof", "jsonb_typeof", "array_length", "array_position",
    "array_remove", "array_append", "array_cat", "cardinality", "unnest", "generate_series",
    "generate_subscripts", "num_nulls", "num_nonnulls",
})  # fmt: skip
_FILE_EXTENSIONS = (".csv", ".tsv", ".parquet", ".pq", ".json", ".jsonl", ".ndjson", ".txt", ".gz", ".zst",
                    ".xlsx", ".db", ".duckdb", ".sqlite", ".avro", ".arrow")  # fmt: skip
_DIALECTS = {"mssql": "tsql", "pyspark": "spark", "postgresql": "postgres"}
_UNREADABLE = "cannot be read as"
_READS = ", which reads"  # how a refusal for a file function reads


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
    own: bool = False,
) -> str | None:
    """Why `sql` may not be sent to a source, in one line that says what to do; None if it is one
    read-only SELECT. `where` and `table` name the flag or config key the query came from. Without
    `known_dialect` (a config whose source is `env:VAR`), SQL that cannot be parsed passes here: it
    is checked again, strictly, in the source's own dialect before anything is sent. Only the
    process owner's own query (`own`: the CLI's `--sql`) may read files."""
    if (deep := too_deep(sql, where)) is not None:
        return deep
    problem = _problem(sql, dialect)
    if problem is None and not own:
        problem = _file_problem(sql, dialect)
    if problem is not None and _READS in problem:
        who = "this query" if own else "a query not written by the person who started this process"
        return (
            f"{where} {problem}: {who} may read only the connection's own tables; save what it needs as a "
            f"table or view in the database and {table}"
        )
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
            name = _function(node)
            if name in _ESCAPES:
                return f"calls {name}(), which can act outside a read-only session"
            if dialect == "postgres" and name in FILE_FUNCTIONS:
                return f"calls {name}(){_READS} the server's files"
            if dialect == "postgres" and isinstance(node, exp.Anonymous) and name not in POSTGRES_FUNCTIONS:
                return (
                    f"calls {name}(), which is not among the functions a read may call (aggregates, "
                    "numbers, text, dates, conditionals)"
                )
    return None


def _function(node: Any) -> str:
    """A function call's name, as written (`pg_catalog.pg_read_file` is `pg_read_file`)."""
    from sqlglot import exp

    name = node.this if isinstance(node, exp.Anonymous) else node.sql_name()
    return str(name).lower().rsplit(".", 1)[-1]


def _file_problem(sql: str, dialect: str | None) -> str | None:
    """What in a (read-only) query reads a file or a directory: a file function of any engine, or
    a table named as a path (`FROM '/etc/passwd'`, which DuckDB reads as a file)."""
    import sqlglot
    from sqlglot import exp

    try:
        root = sqlglot.parse_one(sql, read=dialect)
    except Exception:  # judged unreadable by `_problem` already, or not parsable here: the engine's turn
        return None
    for node in root.walk():
        if isinstance(node, exp.Func) and (name := _function(node)) in FILE_FUNCTIONS:
            return f"calls {name}(){_READS} files"
        if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier | exp.Literal):
            name = str(node.this.this)
            if "/" in name or "\\" in name or name.lower().endswith(_FILE_EXTENSIONS) or "://" in name:
                return f"names {name[:80]!r} as a table{_READS} a file"
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


# how DuckDB opens for a query someone other than the process owner wrote: no file, no network, no
# extension installed or loaded on demand; `confine_duckdb` then locks the configuration
DUCKDB_CONFINED: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
}


def connect_confined_duckdb(url: str) -> Any:
    """An Ibis DuckDB connection opened with `DUCKDB_CONFINED` (a file read-only), its
    configuration then locked: no statement can turn anything back on (`SET` is refused in queries
    too; this holds even if that check were wrong). DuckDB keeps one database per file per process,
    so a second connection to a file finds it locked already: Ibis's own settings (its time zone)
    were made by the first, and are not made again."""
    import duckdb

    path = database_path(url)
    with _CONFINING:  # two threads on one file (triage's workers): one configures, then locks
        con = duckdb.connect(":memory:" if path is None else str(path), read_only=path is not None,
                             config=DUCKDB_CONFINED)  # fmt: skip
        locked = con.execute("SELECT current_setting('lock_configuration')").fetchone()
        if locked and locked[0]:
            return _locked_backend().from_connection(con)
        backend = _ibis_duckdb().from_connection(con)
        con.execute("SET lock_configuration = true")
        return backend


_CONFINING = threading.Lock()  # one database per file per process: its check-then-lock is one step


def _ibis_duckdb() -> Any:
    from ibis.backends.duckdb import Backend

    return Backend


@functools.cache
def _locked_backend() -> Any:
    """Ibis's DuckDB backend for a database whose configuration is locked already: the settings
    Ibis makes on connecting (its time zone) were made by the first connection, and cannot be again."""

    class Locked(_ibis_duckdb()):  # type: ignore[misc]
        def _post_connect(self, extensions: Any = None) -> None:
            try:
                super()._post_connect(extensions)
            except Exception as e:
                if "configuration has been locked" not in str(e):
                    raise
                self._record_batch_readers_consumed: dict[Any, Any] = {}

    return Locked


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
