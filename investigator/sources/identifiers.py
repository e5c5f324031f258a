"""Identifier columns (a user id, an order id, a SKU) are not segments.

A dimension whose values are near-unique splits the metric into cells of a row or two: none has a
history to move against, the cube fills with noise and a real cause drowns in it. Such a
dimension is left out of localization with a note, unless the user keeps it (`--keep-dimensions`).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from investigator.analysis.queries import leaves, row_count
from investigator.analysis.spec import Window

MIN_VALUES = 1_000  # fewer distinct values are always a dimension one can read
MAX_VALUES = 50_000  # more are never segments a person can act on
SHARE_OF_ROWS = 0.2  # distinct values per row over the whole data ...
PER_VALUE_IN_WINDOW = 1.5  # ... or fewer rows per value than this in the current window (ids: ~1)


def identifier_dimensions(table: Any, time_column: str, dims: list[str], window: Window) -> dict[str, int]:
    """The dimensions among `dims` that hold identifiers, with their number of distinct values.

    Judged against the rows (one value in five rows or fewer) and against the current window
    (values seen about once each there), and never below `MIN_VALUES` distinct values.
    """
    if not dims:
        return {}
    t = leaves(table)
    inside = t[time_column].between(window.start, window.end)
    row = _value_counts(t, dims)
    candidates = [(i, d) for i, d in enumerate(dims) if int(row[f"n{i}"] or 0) >= MIN_VALUES]
    if not candidates:
        return {}
    w = t.filter(inside)
    win_aggs: dict[str, Any] = {"__rows": row_count(w)}
    for i, d in candidates:
        win_aggs[f"w{i}"] = w[d].nunique()
    win = w.aggregate(**win_aggs).to_pandas().iloc[0]
    rows, win_rows = int(row["__all"] or 0), int(win["__rows"] or 0)
    out = {}
    for i, d in candidates:
        n, in_window = int(row[f"n{i}"]), int(win[f"w{i}"] or 0)
        sparse = in_window and win_rows / in_window < PER_VALUE_IN_WINDOW
        if n > MAX_VALUES or n >= SHARE_OF_ROWS * rows or sparse:
            out[d] = n
    return out


def _value_counts(t: Any, dims: list[str]) -> Any:
    """The rows (`__all`) and each dimension's number of distinct values (`n<i>`), in one query.
    PostgreSQL sorts the rows for each COUNT(DISTINCT), one column after another (spilling to disk
    past `work_mem`): there each count is of a SELECT DISTINCT, which it hashes, in parallel."""
    if t._find_backend(use_default=True).name != "postgres":
        aggs: dict[str, Any] = {"__all": row_count(t)}
        aggs.update({f"n{i}": t[d].nunique() for i, d in enumerate(dims)})
        return t.aggregate(**aggs).to_pandas().iloc[0]
    query = t.aggregate(__all=row_count(t))
    for i, d in enumerate(dims):
        values = t.select(v=t[d]).distinct()
        query = query.cross_join(values.aggregate(**{f"n{i}": values.v.count()}))
    return query.to_pandas().iloc[0]


def identifier_note(found: dict[str, int]) -> str:
    """One line for the report: what was left out, and how to keep it."""
    names = ", ".join(f"{d} ({n:,} distinct values)" for d, n in found.items())
    return (
        f"Left out of localization as identifiers, not segments: {names}; "
        f"--keep-dimensions {','.join(found)} keeps them."
    )


def window_labels(
    table: Any, time_column: str, dims: list[str], current: Window, baseline: Window
) -> dict[str, tuple[str, str]]:
    """The dimensions among `dims` that hold one value across the whole current window and another
    across the whole baseline (a per-period label such as the year's weather): they do not split
    the data, they name the periods, so their "segments" are the windows themselves and would take
    the whole change. Returns each with its (baseline, current) value."""
    if not dims:
        return {}
    t = leaves(table)
    day = t[time_column]
    in_base, in_current = day.between(baseline.start, baseline.end), day.between(current.start, current.end)
    part = t.filter(in_base | in_current).mutate(__current=in_current)  # one pass for both windows
    aggs: dict[str, Any] = {}
    for i, d in enumerate(dims):  # one value, and no other, where the lowest is the highest: no
        text = part[d].cast("string")  # distinct count (a sort, or Spark's row per column) needed
        aggs[f"v{i}"], aggs[f"w{i}"] = text.min(), text.max()
    got = part.group_by("__current").aggregate(**aggs).to_pandas().set_index("__current")
    if len(got) < 2:  # a window without rows: nothing is a label of both
        return {}
    base, cur = got.loc[False], got.loc[True]
    out = {}
    for i, d in enumerate(dims):
        if _one(base, i) and _one(cur, i) and base[f"v{i}"] != cur[f"v{i}"]:
            out[d] = (str(base[f"v{i}"]), str(cur[f"v{i}"]))
    return out


def _one(row: Any, i: int) -> bool:
    """Whether a window's values of dimension `i` are one value (nulls aside)."""
    low, high = row[f"v{i}"], row[f"w{i}"]
    return not pd.isna(low) and low == high


def label_note(found: dict[str, tuple[str, str]]) -> str:
    """One line for the report: which labels of the periods were left out, and how to keep them."""
    names = ", ".join(f"{d} ({b} in the baseline, {c} in the window)" for d, (b, c) in found.items())
    return (
        f"Left out of localization as labels of the periods, not segments: {names}; "
        f"--keep-dimensions {','.join(found)} keeps them."
    )
