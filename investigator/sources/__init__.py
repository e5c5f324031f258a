"""Where the data lives. `open_data` is the one door every front end uses to reach a source as an
Ibis table: a local CSV/Parquet file, or a table or query behind a connection URL (`env:VAR` may
name the variable holding the URL, so the password stays out of commands and configs)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from investigator.errors import UserError
from investigator.sources.base import DataSource

if TYPE_CHECKING:
    from ibis.expr.types import Table


def source_for(
    data: str, table: str | None = None, sql: str | None = None, *, own: bool = False
) -> DataSource:
    """The source a `--data` value names, with its `--table` or `--sql` for a URL. `own` says
    the table or query is the process owner's own (the CLI's): only such a query may read files,
    and only such a source is opened without DuckDB's confinement."""
    from investigator.sources.urls import is_url

    if is_url(data):
        from investigator.sources.warehouse import WarehouseSource

        return WarehouseSource(data, table, sql, own=own)
    if table or sql:
        raise UserError(f"--table and --sql name data behind a connection URL; {data} is a file")
    from investigator.sources.files import FileSource

    return FileSource(data)


def open_data(data: str, time_column: str, table: str | None = None, sql: str | None = None) -> Table:
    """The source as an Ibis table with its time column typed as dates; `DataError` if unreadable."""
    return source_for(str(data), table, sql).open(time_column)
