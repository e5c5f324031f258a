"""A CSV or Parquet file read by DuckDB through Ibis: the embedded default `DataSource`."""

from __future__ import annotations

import csv
import stat
from pathlib import Path
from typing import TYPE_CHECKING

from investigator.analysis.queries import TimeColumnError, open_table
from investigator.errors import DataError
from investigator.sources.quoted import without_values

if TYPE_CHECKING:
    from ibis.expr.types import Table


class FileSource:
    """One local file. Every question is a DuckDB aggregation; raw rows never reach pandas."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.notes: list[str] = []  # how the file was read (time zone, epoch unit), once opened

    def describe(self) -> str:
        return str(self.path)

    def close(self) -> None:
        """Nothing to let go: DuckDB's in-process connection goes with the table."""

    def open(self, time_column: str) -> Table:
        """The file as an Ibis table, its time column typed as dates."""
        if not self.path.exists():
            raise DataError(f"data file {self.path} does not exist")
        kind = _special(self.path)
        if kind is not None:  # a FIFO or /dev/zero never ends: the run would hang reading it
            raise DataError(f"data file {self.path} is {kind}, not a file: name a CSV or Parquet file")
        if self.path.is_file() and self.path.stat().st_size == 0:
            raise DataError(f"data file {self.path} is empty: it has no rows")
        try:
            self.notes = []
            table = open_table(self.path, time_column, notes=self.notes)
            head = table.head(1).to_pandas()
        except TimeColumnError as e:
            raise DataError(str(e)) from None
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            first = without_values(first, [str(self.path)])  # the driver may quote a value it read
            kind = self.path.suffix.lstrip(".") or "data"
            raise DataError(f"cannot read {self.path} as {kind}: {_bad_line(self.path) or first}") from None
        if len(table.columns) == 1 and _bad_line(self.path):  # a reader's one-column fallback
            raise DataError(f"cannot read {self.path} as csv: {_bad_line(self.path)}")
        if head.empty:
            raise DataError(f"data file {self.path} has no rows (only a header): nothing to investigate")
        return table


def _special(path: Path) -> str | None:
    """What a path is when it is neither a regular file nor a folder (of Parquet parts), else None."""
    mode = path.stat().st_mode
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "a special file"


def _bad_line(path: Path, most: int = 5_000_000) -> str | None:
    """Where a CSV stops matching its header (a file cut off mid-line, a stray delimiter), if it does."""
    if path.suffix.lower() not in {".csv", ".tsv", ".txt"}:
        return None
    try:
        with path.open(newline="", encoding="utf-8", errors="replace") as f:
            rows = csv.reader(f, delimiter="\t" if path.suffix.lower() == ".tsv" else ",")
            header = next(rows, None)
            if not header or len(header) < 2:
                return None
            for n, row in enumerate(rows, start=2):
                if row and len(row) != len(header):
                    return (
                        f"line {n} has {len(row)} fields where the header has {len(header)}: the file "
                        "is malformed or cut off there"
                    )
                if n > most:
                    break
    except (OSError, csv.Error):
        return None
    return None
