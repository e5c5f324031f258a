"""A DataFrame handed to a run, kept as Parquet in the run folder: typed errors, never half-written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from investigator.errors import DataError


def mixed_columns(frame: pd.DataFrame) -> list[str]:
    """Object columns that hold both text and numbers: Arrow (and so every engine) refuses them."""
    out = []
    for name in frame.columns:
        col = frame[name]
        if col.dtype != object:
            continue
        kinds = {type(v) for v in col.dropna().head(100_000)}
        if any(issubclass(k, str) for k in kinds) and any(
            issubclass(k, (int, float)) and not issubclass(k, bool) for k in kinds
        ):
            out.append(str(name))
    return out


def write_frame(frame: pd.DataFrame, path: Path) -> Path:
    """Write `frame` to `path` as Parquet; a DataError naming the column Arrow cannot type, and
    nothing at `path` unless the whole file was written."""
    mixed = mixed_columns(frame)
    if mixed:
        raise DataError(
            f"column {mixed[0]!r} mixes text and numbers; make it one type "
            f"(pd.to_numeric(df[{mixed[0]!r}], errors='coerce') for a metric) and run again"
        )
    if frame.empty:
        raise DataError("the DataFrame has no rows")
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
        column = next((str(c) for c in frame.columns if f"'{c}'" in str(e) or f"column {c}" in str(e)), None)
        where = f"column {column!r}" if column else "a column"
        raise DataError(f"{where} cannot be stored as one type: {str(e).splitlines()[0]}") from None
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    pq.write_table(table, partial)
    partial.replace(path)
    return path
