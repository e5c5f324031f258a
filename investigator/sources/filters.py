"""`--filter`: the rows a run keeps, read once and checked against the data.

Two forms. A segment, `region=EU` (several joined with `,` or `&`, all must hold), compares each
column's values as text. Anything else is a boolean SQL expression (`amount > 100 AND region IN
('EU', 'UK')`), parsed with sqlglot in the source's dialect and kept only if it is one read-only
condition over this table's own columns: no statement, no subquery, no other table, and no function
beyond a few pure ones (`reading.sql_predicate` translates it node by node into Ibis, so nothing
else can reach the engine). The result is a `RowFilter`: data, which the kernel, the host's cause
check and the warehouse extract each rebuild the same way.
"""

from __future__ import annotations

import difflib
import functools
import operator
import re
from pathlib import Path
from typing import TYPE_CHECKING

from investigator.analysis.reading import FilterError, filtered, parse_condition, sql_predicate, user_columns
from investigator.analysis.spec import AnalysisSpec, RowFilter, Window
from investigator.errors import DataError, UserError
from investigator.limits import too_deep
from investigator.sources.base import DataSource
from investigator.sources.extract import EXTRACT_FILE

if TYPE_CHECKING:
    from ibis.expr.types import Table

__all__ = ["FilteredSource", "check_rows", "parse_filter", "run_source"]

_NOT_PLAIN = "=,&<>!;'\"()"  # a segment's names and values hold none of these; anything else is SQL
_PAIR = re.compile(rf"^\s*([^\s\d{_NOT_PLAIN}][^{_NOT_PLAIN}]*?)\s*=\s*([^{_NOT_PLAIN}]+?)\s*$")


def parse_filter(text: str, table: Table, dialect: str | None = "duckdb", flag: str = "--") -> RowFilter:
    """The filter `text` names, checked against `table`'s columns; a `UserError` in one line that
    says what to write instead (a misspelt column gets a did-you-mean)."""
    text = text.strip()
    if (refused := too_deep(text, f"{flag}filter")) is not None:  # triage's segment filters too
        raise UserError(refused)
    columns = user_columns(table.columns)
    pairs = [_PAIR.match(part) for part in re.split(r"[,&]", text)]
    if text and all(pairs):
        segment = [(m.group(1), m.group(2)) for m in pairs if m is not None]
        for column, _ in segment:
            if column not in columns:
                raise UserError(_unknown(flag, column, columns))
        twice = sorted({c for c, _ in segment if [x for x, _ in segment].count(c) > 1})
        if twice:
            raise UserError(
                f"{flag}filter names {twice[0]!r} twice, and a row holds one value: for either value "
                f"write SQL, e.g. {flag}filter \"{twice[0]} IN ('a', 'b')\""
            )
        return RowFilter(text=text, segment=segment)
    try:
        node = parse_condition(text, dialect)
        from sqlglot import exp

        for col in node.find_all(exp.Column):
            if not col.table and col.name not in columns:
                raise UserError(_unknown(flag, col.name, columns))
        sql_predicate(table, text, dialect)
    except FilterError as e:
        raise UserError(
            f"{flag}filter must be a segment like region=EU or one read-only condition on the table's "
            f"columns, but it {e}"
        ) from None
    return RowFilter(text=text, sql=node.sql(dialect=dialect), dialect=dialect)


def _unknown(flag: str, column: str, columns: list[str]) -> str:
    close = difflib.get_close_matches(column, columns, n=1)
    tail = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"{flag}filter names column {column!r}, which the data lacks; columns are: {', '.join(columns)}{tail}"
    )


def check_rows(
    everything: Table, kept: Table, where: RowFilter, time_column: str, windows: list[Window] | None = None
) -> None:
    """A `DataError` when the filter keeps no row (of `windows`, when given): one line, with the
    values a segment's column does hold nearest to the one asked for."""
    t = kept
    if windows:
        day = t[time_column]
        t = t.filter(functools.reduce(operator.or_, [day.between(w.start, w.end) for w in windows]))
    if int(t.count().to_pyarrow().as_py()) > 0:
        return
    span = " or ".join(f"{w.start}..{w.end}" for w in windows or [])
    where_ = f" in the windows compared ({span})" if span else ""
    hint = ""
    for column, value in where.segment:
        values = everything[column].cast("string").name("v").as_table().distinct().limit(10_000)
        held = [str(v) for v in values.to_pyarrow().column("v").to_pylist() if v is not None]
        if value not in held:
            close = difflib.get_close_matches(value, held, n=1) or [
                h for h in held if h.lower() == value.lower()
            ]
            shown = ", ".join(sorted(held)[:12])
            hint = f"; {column} holds {shown}" + (f": did you mean {column}={close[0]}?" if close else "")
            break
    raise DataError(f"--filter {where.text} matches no rows{where_}{hint}")


class FilteredSource:
    """A source whose table is only the rows a filter keeps: what the host's cause check reads."""

    def __init__(self, source: DataSource, where: RowFilter) -> None:
        self.source, self.where = source, where
        self.notes: list[str] = []

    def describe(self) -> str:
        return f"{self.source.describe()} where {self.where.described}"

    def open(self, time_column: str) -> Table:
        table = filtered(self.source.open(time_column), self.where)
        self.notes = self.source.notes
        return table

    def close(self) -> None:
        self.source.close()


def run_source(data_path: str | Path, spec: AnalysisSpec) -> DataSource:
    """A run's data as the run sees it: the file, filtered by the run's filter, except a warehouse
    extract, which the engine computed from the filtered rows already."""
    from investigator.sources.files import FileSource

    source = FileSource(data_path)
    if spec.filter is None or Path(data_path).name == EXTRACT_FILE:
        return source
    return FilteredSource(source, spec.filter)
