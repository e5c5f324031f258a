"""Engine-side aggregation through Ibis: every function returns a small grouped frame.

Raw rows never reach pandas: the engine (DuckDB by default, any Ibis backend otherwise) sums them.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import ibis
import ibis.expr.types as ir
import pandas as pd

from .spec import AnalysisSpec

CUR, BASE = "cur_", "base_"


def open_table(source: Any, time_column: str, con: Any = None) -> ir.Table:
    """Open a Parquet/CSV path (or a DataFrame) as an Ibis table whose time column is a date."""
    if isinstance(source, pd.DataFrame):
        table = ibis.memtable(source)
    else:
        con = con or ibis.duckdb.connect()
        path = Path(source)
        suffix = path.suffix.lower()
        if suffix in {".parquet", ".pq"}:
            table = con.read_parquet(str(path))
        elif suffix in {".csv", ".tsv", ".txt"}:
            table = con.read_csv(str(path))
        else:
            raise ValueError(f"unsupported file type {suffix!r}: use .parquet or .csv")
    if time_column in table.columns:
        col = table[time_column]
        if not col.type().is_date():
            table = table.mutate(**{time_column: col.cast("timestamp").date()})
    return table


def _in(t: ir.Table, spec: AnalysisSpec, start: date, end: date) -> ir.BooleanValue:
    return t[spec.time_column].between(start, end)


def period_cube(table: ir.Table, spec: AnalysisSpec) -> pd.DataFrame:
    """One row per leaf (combination of dimension values), with `cur_<m>` and `base_<m>` sums."""
    t = table
    cur = _in(t, spec, spec.current.start, spec.current.end)
    base = _in(t, spec, spec.baseline.start, spec.baseline.end)
    aggs: dict[str, Any] = {}
    for m in spec.measures:
        aggs[CUR + m] = ibis.ifelse(cur, t[m], 0).sum()
        aggs[BASE + m] = ibis.ifelse(base, t[m], 0).sum()
    filtered = t.filter(cur | base)
    expr = (
        filtered.group_by(spec.dimensions).aggregate(**aggs)
        if spec.dimensions
        else (filtered.aggregate(**aggs))
    )
    df = expr.to_pandas()
    for m in spec.measures:
        for p in (CUR, BASE):
            df[p + m] = pd.to_numeric(df[p + m], errors="coerce").fillna(0.0).astype(float)
    for d in spec.dimensions:
        df[d] = df[d].astype("string").fillna("(null)").astype(str)
    return df.sort_values(spec.dimensions).reset_index(drop=True) if spec.dimensions else df


def daily_totals(table: ir.Table, spec: AnalysisSpec) -> pd.DataFrame:
    """Per-day sums of the metric's measures and the row count, over the whole history."""
    t = table
    aggs: dict[str, Any] = {m: t[m].sum() for m in spec.measures}
    aggs["rows"] = t.count()
    df = t.group_by(spec.time_column).aggregate(**aggs).to_pandas()
    df = df.rename(columns={spec.time_column: "date"})
    df["date"] = pd.to_datetime(df["date"]).dt.date
    for m in spec.measures:
        df[m] = pd.to_numeric(df[m], errors="coerce").fillna(0.0).astype(float)
    return df.sort_values("date").reset_index(drop=True)


def daily_by_dimension(table: ir.Table, spec: AnalysisSpec, dim: str) -> pd.DataFrame:
    """Per-day, per-value sums of the numerator and row counts for one dimension."""
    t = table
    df = (
        t.group_by([spec.time_column, dim])
        .aggregate(value=t[spec.numerator].sum(), rows=t.count())
        .to_pandas()
        .rename(columns={spec.time_column: "date"})
    )
    df["date"] = pd.to_datetime(df["date"]).dt.date
    df[dim] = df[dim].astype("string").fillna("(null)").astype(str)
    df["value"] = pd.to_numeric(df["value"], errors="coerce").fillna(0.0).astype(float)
    return df


def duplicate_profile(table: ir.Table, spec: AnalysisSpec, days: list[date] | None = None) -> pd.DataFrame:
    """Per-day row count, distinct-row count and the numerator summed over distinct rows.

    A distinct over every column is the costliest query there is, so callers pass the few `days`
    worth checking.
    """
    t = table if days is None else table.filter(table[spec.time_column].isin(days))
    rows = t.group_by(spec.time_column).aggregate(rows=t.count(), value=t[spec.numerator].sum())
    d = t.distinct()
    distinct = d.group_by(spec.time_column).aggregate(
        distinct_rows=d.count(), distinct_value=d[spec.numerator].sum()
    )
    df = rows.join(distinct, spec.time_column).to_pandas().rename(columns={spec.time_column: "date"})
    df["date"] = pd.to_datetime(df["date"]).dt.date
    for c in ("value", "distinct_value"):
        df[c] = pd.to_numeric(df[c], errors="coerce").fillna(0.0).astype(float)
    return df.sort_values("date").reset_index(drop=True)


def value_profile(table: ir.Table, spec: AnalysisSpec) -> dict[str, dict[str, int]]:
    """Null and negative counts of each measure, in the current and the baseline window."""
    t = table
    out: dict[str, dict[str, int]] = {}
    for name, w in (("current", spec.current), ("baseline", spec.baseline)):
        sub = t.filter(_in(t, spec, w.start, w.end))
        aggs: dict[str, Any] = {"rows": sub.count()}
        for m in spec.measures:
            aggs[f"{m}__nulls"] = sub[m].isnull().sum()
            aggs[f"{m}__negatives"] = (sub[m] < 0).sum()
        row = sub.aggregate(**aggs).to_pandas().iloc[0]
        out[name] = {k: int(v) if pd.notna(v) else 0 for k, v in row.items()}
    return out
