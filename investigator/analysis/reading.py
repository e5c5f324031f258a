"""Reading data as an Ibis table whose time column holds dates: a Parquet or CSV file (in DuckDB)
or a DataFrame, its time column read without a guess (timestamps as the day in the data's own
zone, integer years and YYYYMM(DD), epoch numbers, `2024-Q1` text)."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir
import pandas as pd

from .grain import EPOCH_UNITS, integer_time_kind
from .table import Table

_TEXT_PERIODS = {  # text time columns DuckDB does not read as dates: pattern -> how to make a date
    "year": r"^\s*\d{4}\s*$",
    "month": r"^\s*\d{4}-\d{1,2}\s*$",
    "quarter": r"^\s*\d{4}\s*-?\s*[Qq][1-4]\s*$",
}


class TimeColumnError(ValueError):
    """A time column whose values cannot be read as dates without a guess."""


def open_table(source: Any, time_column: str, con: Any = None, notes: list[str] | None = None) -> Table:
    """Open a Parquet/CSV path (or a DataFrame) as an Ibis table whose time column is a date.

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
                table = table.mutate(**{time_column: table[time_column].strip().substr(0, 10).cast("date")})
                said.append(f"Dates are days as {time_column} writes them, each in its own UTC offset.")
        else:
            raise ValueError(f"unsupported file type {suffix!r}: use .parquet or .csv")
    if time_column in table.columns and not table[time_column].type().is_date():
        table = table.mutate(**{time_column: as_dates(table, time_column, said)})
    return table


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
    return col.cast("timestamp").date()


def _integral(table: Table, name: str) -> bool:
    col = table[name]
    row = table.aggregate(frac=(col != col.floor()).sum()).to_pandas().iloc[0]
    return not int(row["frac"] or 0)
