"""The aggregated extract of a warehouse table: what the kernel reads instead of the rows.

The engine groups the rows by date and every dimension and returns, per group, each measure's sum
and its null and negative counts, the row count, and the distinct-row count (with the numerator
summed over distinct rows) for the periods the duplicate check suspects. Distinct counts are
counted per day and leaf, and again per day for the whole data and per dimension value (rows
marked in `__level`), and over every window the analysis compares (`analysis.distinct`: the
window and baseline per leaf, value and whole, and the window ending at every period): never
added up from smaller segments. The analysis functions sum those parts
(`investigator.analysis.queries`), so the kernel's answers equal the raw rows' answers while only
aggregates leave the engine. The extract is written to the run folder, outside the kernel's
workspace (Docker mounts it read-only), where the host's cause check reads it too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import ibis
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from investigator.analysis.distinct import extract_rows
from investigator.analysis.drivers import driver_measures, driver_value
from investigator.analysis.quality import duplicate_suspects
from investigator.analysis.queries import (
    DISTINCT,
    DISTINCT_ROWS,
    LEAF,
    LEVEL,
    NEGATIVES,
    NULLS,
    ROWS,
    TOTAL,
    daily_totals,
    in_periods,
    measure,
    measured,
)
from investigator.analysis.spec import AnalysisSpec
from investigator.errors import DataError
from investigator.sources.fetch import arrow

EXTRACT_FILE = "extract.parquet"
MAX_EXTRACT_ROWS = 2_000_000  # dates x segment combinations; beyond this the "aggregate" is the data


class Extract(BaseModel):
    """What the engine sent: rows (groups) and bytes moved to the host."""

    path: str
    rows: int
    bytes_moved: int


def write_extract(table: Any, spec: AnalysisSpec, path: Path, max_rows: int = MAX_EXTRACT_ROWS) -> Extract:
    """Run the grouped aggregations in the engine and write the result as Parquet at `path`.

    Refuses (DataError) when the groups outnumber `max_rows`: fewer dimensions or a shorter
    history make it fit. Only `max_rows + 1` groups are ever fetched to find that out.
    """
    keys = [spec.time_column, *spec.dimensions]
    t = measured(table, spec)
    aggs: dict[str, Any] = {ROWS: t.count()}
    for m in spec.measures:
        column = spec.distinct.get(m)
        aggs[m] = measure(t, spec, m).cast("float64")
        aggs[m + NULLS] = t[column or m].isnull().sum().cast("int64")
        aggs[m + NEGATIVES] = ibis.literal(0, "int64") if column else (t[m] < 0).sum().cast("int64")
    for d in driver_measures(spec):  # the tree's sums and counts, summed per group like the metric's
        aggs.setdefault(d.name, driver_value(t, d).cast("float64"))
    n = spec.numerator
    main = _fetch(t.group_by(keys).aggregate(**aggs), max_rows, spec)
    moved = main.nbytes
    frame = main.to_pandas()
    # distinct rows only in the periods the duplicate check will look at (as it does on a file):
    # a distinct over every column is the costliest query there is
    # the periods' row counts are the groups' counts summed: no second pass over the rows
    # (on a private DuckDB connection: ibis's default one is shared by every thread of the process,
    # and DuckDB refuses a second call on a busy connection: triage runs investigations in threads)
    private = ibis.duckdb.connect()
    try:
        private.con.register("extract_main", main)
        suspects = duplicate_suspects(daily_totals(private.table("extract_main"), spec), spec)
    finally:
        private.disconnect()
    if suspects:
        d = t.filter(in_periods(t, spec, suspects)).distinct()
        dup = _fetch(
            d.group_by(keys).aggregate(
                **{DISTINCT_ROWS: d.count(), n + DISTINCT: measure(d, spec, n).cast("float64")}
            ),
            max_rows,
            spec,
        )
        moved += dup.nbytes
        frame = frame.merge(dup.to_pandas(), on=keys, how="left")  # null keys match here
    else:
        frame[DISTINCT_ROWS], frame[n + DISTINCT] = None, None
    unchecked = frame[DISTINCT_ROWS].isna()  # elsewhere: every row counts as distinct
    frame[DISTINCT_ROWS] = frame[DISTINCT_ROWS].where(~unchecked, frame[ROWS]).astype("int64")
    frame[n + DISTINCT] = frame[n + DISTINCT].where(~unchecked, frame[n]).astype("float64")
    frame[ROWS] = frame[ROWS].astype("int64")
    for m in spec.measures:
        for part in (m + NULLS, m + NEGATIVES):
            frame[part] = frame[part].fillna(0).astype("int64")
    if spec.distinct:  # the engine's distinct counts per day, whole and per dimension value
        frame[LEVEL] = LEAF
        parts = [frame]
        for level, by in [(TOTAL, []), *((dim, [dim]) for dim in spec.dimensions)]:
            counts = {m: t[c].nunique().cast("float64") for m, c in spec.distinct.items()}
            got = _fetch(t.group_by([spec.time_column, *by]).aggregate(**counts), max_rows, spec)
            moved += got.nbytes
            rollup = got.to_pandas()
            rollup[LEVEL] = level
            parts.append(rollup)
        # and every window the analysis compares, counted whole (`analysis.distinct`)
        parts += [p for p in extract_rows(t, spec, spec.dimensions) if len(p)]
        frame = pd.concat(parts, ignore_index=True)
        for col in frame.columns:  # rollup rows have no row counts: 0, never null
            if col in (ROWS, DISTINCT_ROWS) or col.endswith((NULLS, NEGATIVES)):
                frame[col] = frame[col].fillna(0).astype("int64")
    frame[spec.time_column] = pd.to_datetime(frame[spec.time_column]).dt.date
    for dim in spec.dimensions:  # every engine's text as text; nulls stay null
        if frame[dim].dtype == object or str(frame[dim].dtype).startswith("string"):
            frame[dim] = frame[dim].astype("string")
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), partial)
    partial.replace(path)  # never a half-written extract under the real name
    return Extract(path=str(path), rows=len(frame), bytes_moved=int(moved))


def _fetch(expr: Any, max_rows: int, spec: AnalysisSpec) -> pa.Table:
    got = arrow(expr, limit=max_rows + 1)
    if got.num_rows > max_rows:
        dims = ", ".join(spec.dimensions) or "none"
        raise DataError(
            f"the aggregated extract would hold more than {max_rows:,} rows (dates x combinations of "
            f"the dimensions {dims}): pass fewer --dimensions, or a --sql query over a shorter history"
        )
    return got
