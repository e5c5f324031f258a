"""Engine-side aggregation through Ibis: every function returns a small grouped frame.

Raw rows never reach pandas: the engine (DuckDB by default, any Ibis backend otherwise) sums them.
Each function also reads an *extract* (see `investigator.sources.extract`): the rows of a warehouse
table already summed per date and segment by its engine, with the row, null, negative and
distinct-row counts alongside (`__rows`, `<m>__nulls`, ...), so sums of those parts give exactly
what the raw rows would.

Counts (`count(*)`, `count(col)`) add up like sums. A distinct count does not, over days or
segments: its per-period values (`daily_totals`, `daily_by_dimension`) are each period's own count,
for charts and the quality checks, and every window the analysis compares is counted by the engine
over the whole window (`distinct`): the cube's leaves, each dimension's values and the whole data
over the window and the baseline (the cube's `rollups`, read by `grouped` and `whole`), and the
window ending at every period for the history (the per-period frame's `windows`). An extract with
distinct counts holds the per-day rollups as rows marked in `__level` ("" for leaves, "*" for the
whole data, a dimension's name for its values), and the window counts and deltas under "@" and "~".

Opening a file or a frame as a table lives in `reading` (`open_table`, `as_dates`).
"""

from __future__ import annotations

from datetime import date
from typing import Any

import ibis
import ibis.expr.types as ir
import pandas as pd

from .cube import ROLLUPS, fingerprint
from .cube import grouped as grouped
from .cube import rest as rest
from .cube import whole as whole
from .distinct import COUNTS, ONLY, WHOLE, count_expr, dimension_counts, rolled, window_deltas
from .grain import Grain
from .reading import TimeColumnError as TimeColumnError
from .reading import as_dates as as_dates
from .reading import open_table as open_table
from .spec import AnalysisSpec
from .table import Table

CUR, BASE = "cur_", "base_"
ROWS, DISTINCT_ROWS = "__rows", "__distinct_rows"  # extract columns: rows, distinct rows per group
NULLS, NEGATIVES, DISTINCT = "__nulls", "__negatives", "__distinct"  # suffixes of per-measure parts
LEVEL, LEAF, TOTAL = "__level", "", "*"  # an extract's rollup rows for distinct counts
WINDOWS = "windows"  # `attrs` of the per-period totals: windowed distinct counts
NULL = "null"  # the label of a null dimension value: a segment of its own
_NULL_ALTERNATIVES = (NULL, "(null)", "<null>", "<missing>")


def is_extract(table: Table) -> bool:
    """Whether the table is an engine's extract (already summed per date and segment)."""
    return ROWS in table.columns


def leaves(t: Table) -> Table:
    """An extract's leaf rows (one per date and segment), without the distinct-count rollups."""
    return t.filter(t[LEVEL] == LEAF) if LEVEL in t.columns else t


def measured(t: Table, spec: AnalysisSpec) -> Table:
    """The table with its counted measures as columns that sum: 1 per row for `count(*)`, 1 per
    non-null value for `count(col)`. (An extract already holds them, summed.)"""
    adds: dict[str, Any] = {}
    for name, m in spec.computed.items():
        if m.additive and name not in t.columns:
            adds[name] = ibis.literal(1, "int64") if m.column is None else t[m.column].notnull().cast("int64")
    for name in spec.measures:
        if name not in adds and name in t.columns and t[name].type().is_floating():
            adds[name] = finite(t, name)
    return t.mutate(**adds) if adds else t


def finite(t: Table, name: str) -> ir.FloatingValue:
    """A float column with NaN and infinities as null: bad values, left out of every sum (an
    infinity would swamp it, a NaN would turn it into NaN) and counted as missing values."""
    bad = _not_finite(t, name)
    return t[name] if bad is None else ibis.ifelse(bad, ibis.null("float64"), t[name])


def non_finite_flag(t: Table, name: str) -> ir.IntegerValue:
    """1 for a NaN or infinite value, else 0."""
    bad = _not_finite(t, name)
    return ibis.literal(0, "int64") if bad is None else bad.fill_null(False).cast("int64")


@ibis.udf.scalar.builtin(name="isfinite")  # type: ignore[untyped-decorator]
def _isfinite(x: float) -> bool:  # type: ignore[empty-body]
    """DuckDB's own test: its `isnan` is folded to false from Parquet statistics, which omit NaN."""


def _not_finite(t: Table, name: str) -> ir.BooleanValue | None:
    """Whether a value is NaN or infinite, in the engine's words; None where it has none."""
    try:
        engine = t._find_backend(use_default=True).name
    except Exception:
        engine = "duckdb"
    col = t[name]
    if engine == "duckdb":
        return ~_isfinite(col)
    if engine in ("postgres", "pyspark", "snowflake", "bigquery", "trino", "datafusion"):
        return col.isnan() | col.isinf()
    return None  # SQLite and the like store no NaN


def measure(t: Table, spec: AnalysisSpec, name: str) -> ir.NumericScalar:
    """One measure aggregated over `t`'s group: a sum, or the engine's distinct count of raw rows
    (an extract's leaf rows hold distinct counts already, which the caller only adds over days)."""
    column = spec.distinct.get(name)
    if column is not None and not is_extract(t):
        if spec.computed[name].kind == "approx_count_distinct":
            return t[column].approx_nunique()
        return t[column].nunique()
    return t[name].sum()


def row_count(t: Table) -> ir.IntegerScalar:
    """The number of source rows: counted, or summed from an extract's `__rows`."""
    return t[ROWS].sum() if is_extract(t) else t.count()


def null_labels(table: Table, dims: list[str]) -> dict[str, str]:
    """Per dimension, the label its null values get: "null", unless a real value is spelled so."""
    if not dims:
        return {}
    aggs = {
        f"{d}__{i}": (table[d].cast("string") == label).any()
        for d in dims
        for i, label in enumerate(_NULL_ALTERNATIVES)
    }
    row = table.aggregate(**aggs).to_pandas().iloc[0]
    out = {}
    for d in dims:
        taken = [bool(row[f"{d}__{i}"]) for i in range(len(_NULL_ALTERNATIVES))]
        out[d] = next((lab for lab, t in zip(_NULL_ALTERNATIVES, taken, strict=True) if not t), "<null:>")
    return out


def null_label_of(values: pd.Series) -> str:
    """The label `null_labels` gives a dimension's nulls, read off every distinct value of it that
    a grouped query already returned (no second pass over the data). Only text can be spelled like
    a null label: the engine casts numbers, booleans and dates to none of them."""
    taken = {v for v in values.unique() if isinstance(v, str)}
    return next((lab for lab in _NULL_ALTERNATIVES if lab not in taken), "<null:>")


def _label(df: pd.DataFrame, dims: list[str], labels: dict[str, str]) -> None:
    """Dimension values as text, nulls as their own label (never "None", "nan" or a real value)."""
    for d in dims:
        df[d] = df[d].astype("string").fillna(labels.get(d, NULL)).astype(str)


def _to_periods(df: pd.DataFrame, spec: AnalysisSpec, keys: list[str], sums: list[str]) -> pd.DataFrame:
    """Per-date sums re-summed per period of the spec's grain, each dated at its period start.

    Sums stay NaN when every value of a period is null: a missing value never becomes 0.
    """
    df["date"] = pd.to_datetime(df["date"]).dt.date
    if spec.grain == "day" and spec.grain_step == 1:
        return df
    g: Grain = spec.periods
    df["date"] = [g.start(d) for d in df["date"]]
    agg: dict[str, Any] = {c: (lambda s: s.sum(min_count=1)) if c in sums else "sum" for c in df.columns}
    for k in ["date", *keys]:
        agg.pop(k, None)
    return df.groupby(["date", *keys], as_index=False, dropna=False).agg(agg)


def _in(t: Table, spec: AnalysisSpec, start: date, end: date) -> ir.BooleanValue:
    return t[spec.time_column].between(start, end)


def period_cube(table: Table, spec: AnalysisSpec, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per leaf (combination of dimension values), with `cur_<m>` and `base_<m>` sums;
    nulls under `labels` (`null_labels` of the whole table) when the caller has them already.

    With a distinct count, every number is the engine's count over the window (`distinct_cube`).
    """
    if spec.distinct:
        return distinct_cube(table, spec, labels)
    t = measured(leaves(table), spec)
    if spec.distinct and not is_extract(t):
        t = t.group_by([spec.time_column, *spec.dimensions]).aggregate(
            **{m: measure(t, spec, m) for m in spec.measures}
        )
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
        df[BASE + m] *= spec.baseline_scale  # a longer (avgN) or shorter baseline, per period
    _label(df, spec.dimensions, labels if labels is not None else null_labels(leaves(table), spec.dimensions))
    return df.sort_values(spec.dimensions).reset_index(drop=True) if spec.dimensions else df


def distinct_cube(table: Table, spec: AnalysisSpec, labels: dict[str, str] | None = None) -> pd.DataFrame:
    """`period_cube` of a metric with a distinct count: each leaf's numbers counted by the engine over
    the window and the baseline, and in `attrs["rollups"]` the same for the whole data ("*") and
    for each dimension's values: a distinct count of a segment is its own count, never its leaves
    added up (a user in two leaves is one user of their segment)."""
    dims = spec.dimensions
    labels = labels if labels is not None else null_labels(leaves(table), dims)
    cols = [p + m for m in spec.measures for p in (CUR, BASE)]
    only = [ONLY + p + m for m in spec.windowed for p in (CUR, BASE)]

    def counted(by: list[str], level: str) -> pd.DataFrame:
        mine = cols + (only if level in dims else [])
        if is_extract(table):
            rows = table.filter(table[LEVEL] == COUNTS + level)
            df = rows.select(*by, *mine).to_pandas()
        elif level in dims:
            df = dimension_counts(measured(table, spec), spec, level)
        else:
            df = count_expr(measured(table, spec), spec, by).to_pandas()
        for c in mine:
            df[c] = pd.to_numeric(df[c], errors="coerce").fillna(0.0).astype(float)
        for m in spec.measures:
            df[BASE + m] *= spec.baseline_scale
            if ONLY + BASE + m in df.columns:
                df[ONLY + BASE + m] *= spec.baseline_scale
        _label(df, by, labels)
        return df

    cube = counted(dims, "")
    cube = cube.sort_values(dims).reset_index(drop=True) if dims else cube
    rollups = {WHOLE: counted([], WHOLE)}
    rollups |= {d: counted([d], d).groupby(d)[cols + only].sum() for d in dims}
    cube.attrs[ROLLUPS] = {"of": fingerprint(cube, spec), **rollups}
    return cube


def window_series(table: Table, spec: AnalysisSpec, first: date, last: date) -> pd.DataFrame:
    """Each windowed distinct count over the window of the run's length ending at every period of
    `spec.window_grain` from `first` to `last` (index: the period's position on that grid)."""
    g = spec.window_grain
    source = table if is_extract(table) else measured(table, spec)
    deltas = window_deltas(source, spec, [], is_extract(table))
    lo, hi = g.index(first), max(g.index(last), g.index(spec.current.end))
    return pd.concat([rolled(deltas, m, None, lo, hi) for m in spec.windowed], axis=1)


def window_series_by(
    table: Table, spec: AnalysisSpec, dim: str, label: str, first: date, last: date
) -> pd.DataFrame:
    """`window_series` of the numerator per value of `dim` (columns, nulls under `label`)."""
    g = spec.window_grain
    source = table if is_extract(table) else measured(table, spec)
    deltas = window_deltas(source, spec, [dim], is_extract(table))
    _label(deltas, [dim], {dim: label})
    lo, hi = g.index(first), max(g.index(last), g.index(spec.current.end))
    return rolled(deltas, spec.numerator, dim, lo, hi)


def daily_totals(table: Table, spec: AnalysisSpec) -> pd.DataFrame:
    """Per-period sums of the metric's measures and the row count, over the whole history.

    One row per period of the data's grain (`spec.grain`): per day for daily data and event
    timestamps, per week, month, quarter or year for coarser data, each dated (`date`) at its
    period's first day, so a month-end row of 2024-03-31 counts in the row dated 2024-03-01. A
    measure whose every value in a period is null stays NaN there (never 0).
    """
    t = measured(leaves(table), spec)
    rollup = LEVEL in table.columns and bool(spec.distinct)  # an extract's whole-data daily counts
    aggs: dict[str, Any] = {
        m: measure(t, spec, m) for m in spec.measures if not (rollup and m in spec.distinct)
    }
    aggs["rows"] = row_count(t)
    df = t.group_by(spec.time_column).aggregate(**aggs).to_pandas()
    if rollup:
        whole = table.filter(table[LEVEL] == TOTAL)
        counts = whole.group_by(spec.time_column).aggregate(**{m: whole[m].sum() for m in spec.distinct})
        df = df.merge(counts.to_pandas(), on=spec.time_column, how="left")
    df = df.rename(columns={spec.time_column: "date"})
    df = df[df["date"].notna()]
    for m in spec.measures:
        df[m] = pd.to_numeric(df[m], errors="coerce").astype(float)
    df = _to_periods(df, spec, [], spec.measures)
    df = df.sort_values("date").reset_index(drop=True)
    counted = not is_extract(table) or LEVEL in table.columns  # not an extract being written
    if spec.windowed and len(df) and counted:  # no sum of days is a window's count: count each
        df.attrs[WINDOWS] = window_series(table, spec, df["date"].min(), df["date"].max())
    return df


def daily_by_dimension(
    table: Table, spec: AnalysisSpec, dim: str, labels: dict[str, str] | None = None
) -> pd.DataFrame:
    """Per-period, per-value sums of the numerator and row counts for one dimension (periods as in
    `daily_totals`; null values of the dimension under their own label: `labels`, when `table` is
    a slice of the data whose labels were chosen on the whole of it)."""
    return labelled_by_dimension(table, spec, dim, labels)[0]


def labelled_by_dimension(
    table: Table, spec: AnalysisSpec, dim: str, labels: dict[str, str] | None = None
) -> tuple[pd.DataFrame, str]:
    """`daily_by_dimension`, and the label its null values got there."""
    t = measured(leaves(table), spec)
    n = spec.numerator
    if LEVEL in table.columns and n in spec.distinct:  # the engine's counts per day and value
        per = table.filter(table[LEVEL] == dim)
        rows = t.group_by([spec.time_column, dim]).aggregate(rows=row_count(t)).to_pandas()
        values = per.group_by([spec.time_column, dim]).aggregate(value=per[n].sum()).to_pandas()
        df = rows.merge(values, on=[spec.time_column, dim], how="outer")
    else:
        df = (
            t.group_by([spec.time_column, dim])
            .aggregate(value=measure(t, spec, n), rows=row_count(t))
            .to_pandas()
        )
    df = df.rename(columns={spec.time_column: "date"})
    df["rows"] = df["rows"].fillna(0)
    if labels is None:  # the groups hold every value of the dimension, rows without a date too
        labels = {dim: null_label_of(df[dim])}
    df = df[df["date"].notna()]
    _label(df, [dim], labels)
    df["value"] = pd.to_numeric(df["value"], errors="coerce").fillna(0.0).astype(float)
    return _to_periods(df, spec, [dim], []), labels.get(dim, NULL)


def duplicate_profile(table: Table, spec: AnalysisSpec, days: list[date] | None = None) -> pd.DataFrame:
    """Per-period row count, distinct-row count and the numerator summed over distinct rows.

    A distinct over every column is the costliest query there is, so callers pass the few periods
    (`days`: their first days, as in `daily_totals`) worth checking.
    """
    t = measured(leaves(table), spec)
    if days is not None:
        t = t.filter(in_periods(t, spec, days))
    if is_extract(t):  # the engine counted distinct rows per date and segment: sum those
        n = spec.numerator
        df = t.group_by(spec.time_column).aggregate(
            rows=t[ROWS].sum(),
            value=t[n].sum(),
            distinct_rows=t[DISTINCT_ROWS].sum(),
            distinct_value=t[n + DISTINCT].sum(),
        )
    else:
        rows = t.group_by(spec.time_column).aggregate(rows=t.count(), value=measure(t, spec, spec.numerator))
        # each distinct row with how many times it occurs: a copied load repeats rows about twice,
        # a group booking of 40 identical rows is one row 40 times
        d = t.group_by(list(t.columns)).aggregate(__times=t.count())
        distinct = d.group_by(spec.time_column).aggregate(
            distinct_rows=d.count(),
            distinct_value=measure(d, spec, spec.numerator),
            repeated_rows=(d["__times"] > 1).sum(),
        )
        df = rows.join(distinct, spec.time_column)
    df = df.to_pandas().rename(columns={spec.time_column: "date"})
    for c in ("value", "distinct_value"):
        df[c] = pd.to_numeric(df[c], errors="coerce").fillna(0.0).astype(float)
    df = _to_periods(df, spec, [], [])
    return df.sort_values("date").reset_index(drop=True)


def in_periods(t: Table, spec: AnalysisSpec, days: list[date]) -> ir.BooleanValue:
    """Rows in the periods that start on `days` (the data's grain)."""
    col = t[spec.time_column]
    if spec.grain == "day" and spec.grain_step == 1:
        return col.isin(days) if days else ibis.literal(False)
    g = spec.periods
    spans = [col.between(g.start(d), g.end(d)) for d in days]
    return ibis.or_(*spans) if spans else ibis.literal(False)


def value_profile(table: Table, spec: AnalysisSpec) -> dict[str, dict[str, float]]:
    """Per window (current, baseline): rows, and per measure its nulls, negatives, non-null values
    and their sum (`<m>__nulls`, `<m>__negatives`, `<m>__values`, `<m>__sum`), and how many of
    the nulls were NaN or infinite in the data (`<m>__nonfinite`; an extract counts them as nulls)."""
    raw = leaves(table)
    bad = {
        f"{m}__nonfinite": non_finite_flag(raw, m)
        for m in spec.measures
        if m in raw.columns and raw[m].type().is_floating() and not is_extract(raw)
    }
    t = measured(raw.mutate(**bad) if bad else raw, spec)
    out: dict[str, dict[str, float]] = {}
    for name, w in (("current", spec.current), ("baseline", spec.baseline)):
        sub = t.filter(_in(t, spec, w.start, w.end))
        rows = row_count(sub)
        aggs: dict[str, Any] = {"rows": rows}
        for m in spec.measures:
            if is_extract(sub):
                aggs[f"{m}__nulls"] = sub[m + NULLS].sum()
                aggs[f"{m}__negatives"] = sub[m + NEGATIVES].sum()
                aggs[f"{m}__values"] = rows - sub[m + NULLS].sum()
            else:
                col = sub[spec.distinct.get(m, m)]  # a distinct count: its counted column's values
                flag = f"{m}__nonfinite"
                aggs[flag] = sub[flag].sum() if flag in bad else ibis.literal(0, "int64")
                aggs[f"{m}__nulls"] = col.isnull().sum()
                aggs[f"{m}__negatives"] = (col < 0).sum() if m not in spec.distinct else ibis.literal(0)
                aggs[f"{m}__values"] = col.count()
            aggs[f"{m}__sum"] = measure(sub, spec, m)
        row = sub.aggregate(**aggs).to_pandas().iloc[0]
        out[name] = {str(k): float(v) if pd.notna(v) else 0.0 for k, v in row.items()}
    return out
