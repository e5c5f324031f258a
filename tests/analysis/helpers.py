"""Small hand-made frames whose right answers are known by construction."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

import pandas as pd

from investigator.analysis.spec import AnalysisSpec, Window

END = date(2026, 3, 29)


def spec(
    num: str = "revenue", den: str | None = None, dims: list[str] | None = None, days: int = 7
) -> AnalysisSpec:
    cur = Window(start=END - timedelta(days=days - 1), end=END)
    return AnalysisSpec(
        metric=f"{num}/{den}" if den else num,
        numerator=num,
        denominator=den,
        dimensions=dims if dims is not None else ["country", "platform"],
        current=cur,
        baseline=cur.shifted(days),
    )


def cube(
    rows: list[tuple[Any, ...]],
    dims: tuple[str, ...] = ("country", "platform"),
    measures: tuple[str, ...] = ("revenue",),
) -> pd.DataFrame:
    """rows: (*dim values, cur_m1, base_m1, cur_m2, base_m2, ...)"""
    cols = list(dims)
    for m in measures:
        cols += [f"cur_{m}", f"base_{m}"]
    return pd.DataFrame(rows, columns=cols)


def daily(values: dict[date, float] | list[float], num: str = "revenue", end: date = END) -> pd.DataFrame:
    if isinstance(values, list):
        n = len(values)
        values = {end - timedelta(days=n - 1 - i): v for i, v in enumerate(values)}
    return pd.DataFrame({"date": list(values), num: [float(v) for v in values.values()], "rows": 10})
