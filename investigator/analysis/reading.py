"""Reading data as an Ibis table whose time column holds dates: a Parquet or CSV file (in DuckDB)
or a DataFrame, its time column read without a guess (timestamps as the day in the data's own
zone, integer years and YYYYMM(DD), epoch numbers, `2024-Q1` text), and keeping the rows a run's
filter names (`filtered`)."""

from __future__ import annotations

import contextlib
import operator
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir
import pandas as pd
from ibis.common.exceptions import IbisError

from .grain import EPOCH_UNITS, integer_time_kind
from .spec import RowFilter
from .table import Table

_TEXT_PERIODS = {  # text time columns DuckDB does not read as dates: pattern -> how to make a date
    "year": r"^\s*\d{4}\s*$",
    "month": r"^\s*\d{4}-\d{1,2}\s*$",
    "quarter": r"^\s*\d{4}\s*-?\s*[Qq][1-4]\s*$",
}


# a CSV up to this size is parsed once into the engine's memory (a run asks it dozens of queries,
# each of which would parse the file again); a larger one is read from the file by each query
KEEP_CSV_BYTES = 256 * 2**20
STORED_TIME = "__stored_time"  # the time column as stored, where reading it as dates cut it to the day


class TimeColumnError(ValueError):
    """A time column whose values cannot be read as dates without a guess."""


class FilterError(ValueError):
    """A filter that is not a read-only boolean expression over the table's columns."""


def open_table(
    source: Any,
    time_column: str,
    con: Any = None,
    notes: list[str] | None = None,
    where: RowFilter | None = None,
) -> Table:
    """Open a Parquet/CSV path (or a DataFrame) as an Ibis table whose time column is a date, and
    keep only the rows `where` names (a run's filter).

    A timestamp with a time zone gives the day in that zone (the data's own), not in UTC; how the
    time column was read is added to `notes` when it was not plain dates.
    """
    said = notes if notes is not None else []
    if isinstance(source, pd.DataFrame):
        col = source.get(time_column)
        zone = getattr(getattr(col, "dt", None), "tz", None) if col is not None else None
        if zone is not None:
            source = source.assign(**{time_column: col.dt.tz_localize(None)})  # wall time in its zone
            said.append(_zone_note(time_column, str(zone)))
        table = ibis.memtable(source)
    else:
        if con is None:
            con = ibis.duckdb.connect()
            # a query over ~100M rows would draw DuckDB's progress bar over the terminal and the JSON;
            # in a Jupyter kernel DuckDB refuses the setting (it draws no bar there without ipywidgets)
            with contextlib.suppress(Exception):
                con.raw_sql("SET enable_progress_bar = false")
        path = Path(source)
        suffix = path.suffix.lower()
        if suffix in {".parquet", ".pq"}:
            zone = _parquet_zone(path, time_column)
            if zone:
                con.raw_sql("SET TimeZone = '{}'".format(zone.replace("'", "''")))
                said.append(_zone_note(time_column, zone))
            table = con.read_parquet(str(path))
        elif suffix in {".csv", ".tsv", ".txt"}:
            table = con.read_csv(str(path))
            if time_column in table.columns and getattr(table[time_column].type(), "timezone", None):
                # `2026-03-29T23:30:00-08:00`: the day the data writes (its own offset), not UTC's
                table = con.read_csv(str(path), types={time_column: "VARCHAR"})
                day = table[time_column].strip().substr(0, 10).cast("date")
                table = table.mutate(**{STORED_TIME: table[time_column], time_column: day})
                said.append(f"Dates are days as {time_column} writes them, each in its own UTC offset.")
            if path.is_file() and path.stat().st_size <= KEEP_CSV_BYTES:
                table = con.create_table(f"csv_{uuid.uuid4().hex}", table, temp=True)
        else:
            raise ValueError(f"unsupported file type {suffix!r}: use .parquet or .csv")
    if time_column in table.columns and not table[time_column].type().is_date():
        table = dated(table, time_column, said)
    return filtered(table, where)


def dated(table: Table, time_column: str, notes: list[str] | None = None) -> Table:
    """The table with its time column as dates (`as_dates`). A timestamp or text cut to its day
    keeps its stored value in `STORED_TIME`: two rows are copies only when their stored values
    are the same, never because two events of one day look alike once cut to the day."""
    kind = table[time_column].type()
    keep = {} if kind.is_numeric() else {STORED_TIME: table[time_column]}
    return table.mutate(**keep, **{time_column: as_dates(table, time_column, notes)})


def user_columns(names: Any) -> list[str]:
    """The data's own columns: not the ones this package adds (`STORED_TIME`)."""
    return [c for c in names if c != STORED_TIME]


# the filter ---------------------------------------------------------------------------------------
def filtered(table: Table, where: RowFilter | None) -> Table:
    """The rows `where` keeps, rebuilt from its fields: each `column = value` pair compared as text,
    or the SQL expression translated node by node into Ibis (`sql_predicate`). None keeps every row."""
    if where is None:
        return table
    if where.segment:
        return table.filter([table[c].cast("string") == v for c, v in where.segment])
    return table.filter(sql_predicate(table, where.sql or "", where.dialect))


def parse_condition(sql: str, dialect: str | None) -> Any:
    """The one sqlglot expression `sql` is; a `FilterError` for anything else (two statements, a
    statement, a subquery or another table)."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        found = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except SqlglotError as e:
        raise FilterError(f"cannot be read as {dialect or 'SQL'} ({str(e).splitlines()[0][:120]})") from None
    if len(found) != 1:
        kinds = "; ".join(type(s).__name__.upper() for s in found) or "nothing"
        raise FilterError(f"holds {len(found)} statements ({kinds})")
    node = found[0]
    if isinstance(node, exp.Query | exp.Command) or not isinstance(node, exp.Condition):
        what = str(node.this).upper() if isinstance(node, exp.Command) else node.key.upper()
        raise FilterError(f"is a {what} statement, not a condition on rows")
    if node.find(exp.Query, exp.Table):
        raise FilterError("holds a subquery: a filter reads only this table's own columns")
    return node


def sql_predicate(table: Table, sql: str, dialect: str | None) -> ir.BooleanValue:
    """`sql` as an Ibis condition on `table`. Only what a filter needs translates (columns of this
    table, literals, comparisons, AND/OR/NOT, IN, BETWEEN, LIKE, IS NULL, arithmetic, CAST and a few
    pure functions): anything else is a `FilterError`, so nothing else can reach an engine."""
    node = parse_condition(sql, dialect)
    try:
        value = _value(node, table)
    except IbisError as e:  # `region = 1`: text beside a number
        raise FilterError(f"does not type-check on this table ({str(e).splitlines()[0][:160]})") from None
    if not isinstance(value, ir.BooleanValue):
        raise FilterError("is not true or false for each row (write a comparison, e.g. amount > 100)")
    return value


_BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "EQ": operator.eq, "NEQ": operator.ne, "GT": operator.gt, "GTE": operator.ge, "LT": operator.lt,
    "LTE": operator.le, "And": operator.and_, "Or": operator.or_, "Add": operator.add,
    "Sub": operator.sub, "Mul": operator.mul, "Div": operator.truediv, "Mod": operator.mod,
}  # fmt: skip
_UNARY: dict[str, Callable[[Any], Any]] = {
    "Not": operator.invert, "Neg": operator.neg, "Lower": lambda v: v.lower(),
    "Upper": lambda v: v.upper(), "Length": lambda v: v.length(), "Trim": lambda v: v.strip(),
    "Abs": lambda v: v.abs(),
}  # fmt: skip
_TYPES = {"DATE": "date", "TIMESTAMP": "timestamp", "TEXT": "string", "VARCHAR": "string", "CHAR": "string",
    "INT": "int64", "BIGINT": "int64", "SMALLINT": "int64", "DOUBLE": "float64", "FLOAT": "float64",
    "DECIMAL": "float64", "BOOLEAN": "boolean"}  # fmt: skip
FILTER_GRAMMAR = (
    "columns and values compared with = <> < > <= >=, IN (...), BETWEEN, LIKE, IS NULL, joined with AND, OR, "
    "NOT; arithmetic, CAST and lower, upper, length, trim, abs, coalesce"
)


def _value(node: Any, t: Table) -> Any:
    from sqlglot import exp

    kind = type(node).__name__
    if isinstance(node, exp.Paren):
        return _value(node.this, t)
    if isinstance(node, exp.Column):
        if node.table or node.name not in t.columns:
            raise FilterError(f"names {node.sql()!r}, which is not a column of this table")
        return t[node.name]
    if isinstance(node, exp.Literal):
        text = str(node.this)
        return ibis.literal(
            text if node.is_string else (float(text) if "." in text or "e" in text.lower() else int(text))
        )
    if isinstance(node, exp.Boolean):
        return ibis.literal(bool(node.this))
    if isinstance(node, exp.Null):
        return ibis.null()
    if kind in _BINARY:
        left, right = _value(node.this, t), _value(node.expression, t)
        return _BINARY[kind](*_comparable(left, right))
    if kind in _UNARY and not node.expressions:
        return _UNARY[kind](_value(node.this, t))
    if isinstance(node, exp.In) and not (
        node.args.get("query") or node.args.get("unnest") or node.args.get("field")
    ):
        value = _value(node.this, t)
        return value.isin([_comparable(value, _value(e, t))[1] for e in node.expressions])
    if isinstance(node, exp.Between):
        value = _value(node.this, t)
        low, high = (_comparable(value, _value(node.args[k], t))[1] for k in ("low", "high"))
        return value.between(low, high)
    if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
        return _value(node.this, t).isnull()
    if isinstance(node, exp.Like | exp.ILike) and isinstance(node.expression, exp.Literal):
        value, pattern = _value(node.this, t), str(node.expression.this)
        return value.like(pattern) if isinstance(node, exp.Like) else value.ilike(pattern)
    if isinstance(node, exp.Coalesce):
        return ibis.coalesce(*(_value(e, t) for e in [node.this, *node.expressions]))
    if isinstance(node, exp.Cast) and node.to.this.name in _TYPES:
        return _value(node.this, t).cast(_TYPES[node.to.this.name])
    what = kind.upper()
    if isinstance(node, exp.Func):
        what = f"{node.this if isinstance(node, exp.Anonymous) else node.sql_name()}()"
    raise FilterError(f"uses {what}, which a filter cannot hold; a filter holds {FILTER_GRAMMAR}")


def _comparable(left: Any, right: Any) -> tuple[Any, Any]:
    """A text literal beside a date or timestamp column reads as that type (`day >= '2024-03-01'`)."""
    for a, b in ((left, right), (right, left)):
        if (
            a.type().is_temporal()
            and b.type().is_string()
            and isinstance(b.op(), ibis.expr.operations.Literal)
        ):
            cast = b.cast(a.type())
            return (left, cast) if b is right else (cast, right)
    return left, right


def _parquet_zone(path: Path, column: str) -> str | None:
    """The time zone a Parquet timestamp column was written with (pandas and Arrow keep it)."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(path)
        kind = schema.field(column).type if column in schema.names else None
    except Exception:
        return None  # unreadable here: the reader says why
    return getattr(kind, "tz", None) or None


def _zone_note(column: str, zone: str) -> str:
    return f"Dates are days in the data's own time zone: {column} holds timestamps in {zone}."


def as_dates(table: Table, name: str, notes: list[str] | None = None) -> ir.DateValue:
    """The time column as dates: timestamps cut to their day, integer years (1931) and YYYYMM
    (202403) or YYYYMMDD integers read as such, never as seconds since 1970, and text like
    `2024`, `2024-03` or `2024-Q1` read as the period's first day."""
    col = table[name]
    kind = col.type()
    if kind.is_integer() or (kind.is_floating() and _integral(table, name)):
        n = col.cast("int64")
        stats = (
            table.filter(col.notnull())
            .aggregate(
                lo=n.min(),
                hi=n.max(),
                bad_month=(~(n % 100).between(1, 12)).sum(),
                bad_day=(~((n // 100) % 100).between(1, 12) | ~(n % 100).between(1, 31)).sum(),
            )
            .to_pandas()
            .iloc[0]
        )
        if pd.notna(stats["lo"]):
            what = integer_time_kind(*(int(stats[k] or 0) for k in ("lo", "hi", "bad_month", "bad_day")))
            if what == "year":
                return ibis.date(n, 1, 1)
            if what == "yyyymm":
                return ibis.date(n // 100, n % 100, 1)
            if what == "yyyymmdd":
                return ibis.date(n // 10000, (n // 100) % 100, n % 100)
            if what is not None:
                if notes is not None:
                    notes.append(
                        f"{name} holds integers read as {EPOCH_UNITS[what]} since 1970 (days in UTC)."
                    )
                return n.as_timestamp(what).date()
            raise TimeColumnError(
                f"time column {name!r} holds integers from {int(stats['lo'])} to {int(stats['hi'])}, "
                "which read as none of years, YYYYMM, YYYYMMDD or seconds, milliseconds, microseconds "
                "or nanoseconds since 1970 (1973 to 2286): store it as dates, or as epoch seconds"
            )
    if kind.is_string():
        text = col.strip()
        found = (
            table.filter(col.notnull())
            .aggregate(rows=col.count(), **{k: text.re_search(p).sum() for k, p in _TEXT_PERIODS.items()})
            .to_pandas()
            .iloc[0]
        )
        rows = int(found["rows"] or 0)
        year = text.substr(0, 4).cast("int64")
        if rows and int(found["year"] or 0) == rows:
            return ibis.date(year, 1, 1)
        if rows and int(found["month"] or 0) == rows:
            return ibis.date(year, text.split("-")[1].cast("int64"), 1)
        if rows and int(found["quarter"] or 0) == rows:
            q = text.right(1).cast("int64")
            return ibis.date(year, q * 3 - 2, 1)
        _refuse_text_not_dates(table, name, rows)
    return col.cast("timestamp").date()


def _refuse_text_not_dates(table: Table, name: str, rows: int) -> None:
    """A `TimeColumnError` in one line when text in the time column does not read as a date or
    time (the engine's own cast would fail later with its raw message); nothing where the engine
    cannot try a cast (the cast then says). No value is quoted: text in the data is data, and an
    error message reaches a model through the MCP tool."""
    from ibis.common.exceptions import OperationNotDefinedError, UnsupportedOperationError

    try:
        n = int(table.filter(_not_dates(table[name])).count().to_pandas() or 0)
    except (OperationNotDefinedError, UnsupportedOperationError):
        return
    if n:
        other = _dated_column(table, name)
        which = f"the column of dates ({other!r} holds them)" if other else "the column of dates"
        raise TimeColumnError(
            f"time column {name!r} holds text that does not read as dates ({n:,} of its {rows:,} values): "
            f"name {which} as the time column, or write these values as dates like "
            "2026-03-29 (or 2026-03-29 14:05, 2024-03, 2024-Q1, 2024)"
        )


def _dated_column(table: Table, name: str) -> str | None:
    """Another column that holds dates, to name in the refusal: the first typed as dates or times,
    else the first of text whose every value reads as one (one query, asked only when refusing)."""
    columns = [c for c in user_columns(table.columns) if c != name]
    typed = [c for c in columns if table[c].type().is_temporal()]
    if typed:
        return typed[0]
    texts = [c for c in columns if table[c].type().is_string()][:50]  # one scan, however wide the table
    if not texts:
        return None
    counts = {f"held{i}": table[c].count() for i, c in enumerate(texts)}
    counts |= {f"bad{i}": _not_dates(table[c]).sum() for i, c in enumerate(texts)}
    got = table.aggregate(**counts).to_pandas().iloc[0]
    return next(
        (c for i, c in enumerate(texts) if int(got[f"held{i}"] or 0) and not int(got[f"bad{i}"] or 0)), None
    )


def _not_dates(col: ir.Column) -> ir.BooleanColumn:
    """A value that is there and does not read as a date or time."""
    return col.notnull() & col.try_cast("timestamp").isnull()


def _integral(table: Table, name: str) -> bool:
    col = table[name]
    row = table.aggregate(frac=(col != col.floor()).sum()).to_pandas().iloc[0]
    return not int(row["frac"] or 0)
