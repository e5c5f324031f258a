"""A CSV or Parquet file read by DuckDB through Ibis: the embedded default `DataSource`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from investigator.analysis.queries import open_table
from investigator.errors import DataError


class FileSource:
    """One local file. Every question is a DuckDB aggregation; raw rows never reach pandas."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def describe(self) -> str:
        return str(self.path)

    def open(self, time_column: str) -> Any:
        """The file as an Ibis table, its time column typed as dates."""
        if not self.path.exists():
            raise DataError(f"data file {self.path} does not exist")
        try:
            table = open_table(self.path, time_column)
            table.head(1).to_pandas()
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            kind = self.path.suffix.lstrip(".") or "data"
            raise DataError(f"cannot read {self.path} as {kind}: {first}") from None
        return table
