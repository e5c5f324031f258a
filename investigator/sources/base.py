"""The `DataSource` seam: where a metric's rows live. Implementations: `files.FileSource` (a CSV or
Parquet file through DuckDB, the default) and `warehouse.WarehouseSource` (a table or query behind
a connection URL); tests use both on data they make."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ibis.expr.types import Table


@runtime_checkable
class DataSource(Protocol):
    """Where a metric's rows live. Every question is an aggregation the engine runs; only
    aggregates reach the host and the kernel."""

    notes: list[str]
    """How the data was read (a time zone assumed, an epoch unit), for the report; filled by `open`."""

    def describe(self) -> str:
        """Where the data is, for messages and reports (never a credential)."""
        ...

    def open(self, time_column: str) -> Table:
        """The data as an Ibis table, `time_column` typed as dates; a `DataError` if it cannot be read."""
        ...

    def close(self) -> None:
        """Let go of connections; the source can be opened again later."""
        ...
