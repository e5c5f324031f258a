"""Distinct counts over whole windows for the morning scan, counted by the engine.

`count_distinct(user_id)` over a 7-day window is the users seen in those seven days, as an
investigation counts it (`analysis.distinct`), never the sum of seven daily counts (user-days). The
scan needs that count for the window ending on every day of the history, for the total and each
value of each scanned dimension: one aggregate query per measure, by the method of
`analysis.distinct.delta_expr` (each value and day once; the run of window ends a value adds itself
to that no earlier day of it did, an entry and an exit), the host adding the entries and exits up.
The rows that go back are groups x days, never the data's rows.

Windows of whole months, quarters or years are scored as an investigation scores them
(`analysis.movement`), from each series' count over the window ending at every period
(`period_counts`: `analysis.distinct`'s queries, one per measure and dimension), never from days
added up.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pandas as pd

from investigator.analysis.distinct import rolled, window_deltas
from investigator.analysis.spec import AnalysisSpec, Measure

_EPOCH = date(1970, 1, 1)


def _deltas(table: Any, time_column: str, dims: list[str], m: Measure, days: int) -> Any:
    """The engine query: per (_dim, _value, __i) how the count over the window ending at day
    `__i` (days since 1970-01-01) differs from the one ending the day before (rows may repeat)."""
    import ibis

    def keyed(dim: str) -> Any:
        value = table[dim].cast("string") if dim else ibis.literal(None, type="string")
        day = table[time_column].cast("date").epoch_days()
        return table.select(_dim=ibis.literal(dim), _value=value, __u=table[m.column or ""], __p=day)

    parts = [keyed(d) for d in ["", *dims]]
    rows = parts[0] if len(parts) == 1 else ibis.union(*parts)
    rows = rows.filter(rows["__u"].notnull() & rows["__p"].notnull())
    pairs = rows.distinct()
    prev = pairs["__p"].lag().over(ibis.window(group_by=["_dim", "_value", "__u"], order_by="__p"))
    start = ibis.greatest(pairs["__p"], (prev + days).fill_null(pairs["__p"]))
    runs = pairs.mutate(__s=start, __e=pairs["__p"] + days)
    runs = runs.filter(runs["__s"] < runs["__e"])
    enters = runs.group_by(["_dim", "_value", runs["__s"].name("__i")]).aggregate(__d=runs.count())
    leaves = runs.group_by(["_dim", "_value", runs["__e"].name("__i")]).aggregate(__d=-runs.count())
    return ibis.union(enters, leaves)


def window_counts(
    table: Any, time_column: str, dims: list[str], measures: dict[str, Measure], days: int
) -> pd.DataFrame:
    """Columns date, _dim ("" for the total), _value and one per measure (by its key in
    `measures`): the distinct count over the `days`-day window ending on that date, for every day
    from the first day with rows to the last (windows with no value are 0)."""
    out: pd.DataFrame | None = None
    for key, m in measures.items():
        d = _deltas(table, time_column, dims, m, days).to_pandas()
        d["_value"] = d["_value"].fillna("\x00")  # the total's null value, as a key
        d["__d"] = d["__d"].astype(float)
        per = d.pivot_table(index="__i", columns=["_dim", "_value"], values="__d", aggfunc="sum")
        if per.empty:
            continue
        full = range(int(per.index.min()), int(per.index.max()))  # the last index is the last exit
        counts = per.reindex(full, fill_value=0.0).fillna(0.0).cumsum()
        long = counts.stack(["_dim", "_value"], future_stack=True).rename(key).reset_index()
        out = long if out is None else out.merge(long, on=["__i", "_dim", "_value"], how="outer")
    if out is None:
        return pd.DataFrame(columns=["date", "_dim", "_value", *measures])
    out = out.fillna({k: 0.0 for k in measures})
    out["date"] = [_EPOCH + timedelta(days=int(i)) for i in out.pop("__i")]
    out["_value"] = out["_value"].where(out["_value"] != "\x00", None)
    return out


def period_counts(
    table: Any, spec: AnalysisSpec, dims: list[str], measures: dict[str, Measure], total: str, first: date
) -> dict[str, pd.DataFrame]:
    """Per measure (by its key in `measures`): the distinct count over the window of `spec`'s
    length ending at every period of its window grain (rows: the period's index), for the whole
    data (column `total`) and each value of each dimension (column `dim` + "\x1f" + value), as
    `analysis.movement` reads them from `attrs["windows"]`; from the period of `first` (the
    data's first day) on. Dimension values are compared as text, as the scan's query groups them."""
    g = spec.window_grain
    lo, hi = g.index(first), g.index(spec.current.end)
    table = table.mutate(**{d: table[d].cast("string") for d in dims}) if dims else table
    out = {}
    for key, m in measures.items():
        one = spec.model_copy(update={"numerator": key, "denominator": None, "computed": {key: m}})
        series = [rolled(window_deltas(table, one, [], False), key, None, lo, hi)[key].rename(total)]
        for d in dims:
            deltas = window_deltas(table, one, [d], False)
            per = rolled(deltas[deltas[d].notna()], key, d, lo, hi)
            per.columns = [f"{d}\x1f{v}" for v in per.columns]
            series.append(per)
        out[key] = pd.concat(series, axis=1)
    return out


__all__ = ["period_counts", "window_counts"]
