"""Where the data lives. `open_data` is the one door every front end uses to reach a source as an
Ibis table (a local CSV/Parquet file today; warehouse URLs land here too)."""

from __future__ import annotations

from typing import Any


def open_data(data: str, time_column: str, table: str | None = None, sql: str | None = None) -> Any:
    """The source as an Ibis table with its time column typed as dates; `DataError` if unreadable."""
    from investigator.sources.files import FileSource

    return FileSource(data).open(time_column)
