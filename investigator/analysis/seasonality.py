"""Seasonality: did the same movement happen in the comparable period a year (or week) earlier?"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import BaseModel

from .movement import pct_change, window_value
from .spec import AnalysisSpec


class SeasonalComparison(BaseModel):
    lag_days: int
    change_pct: float | None


class Seasonality(BaseModel):
    kind: Literal["seasonality"] = "seasonality"
    metric: str
    change_pct: float | None
    comparisons: list[SeasonalComparison]
    best_lag_days: int | None
    best_change_pct: float | None
    seasonal: bool
    available: bool  # enough history for at least one comparison


def _lags(spec: AnalysisSpec) -> list[int]:
    # 364 keeps weekdays aligned, 365 keeps calendar dates; short windows also compare a week back
    lags = [364, 365]
    if spec.current.days < 7:
        lags.append(7)
    return lags


def seasonality(daily: pd.DataFrame, spec: AnalysisSpec, tolerance: float = 0.35) -> Seasonality:
    """Compare the current change with the same windows shifted back by each seasonal lag.

    Seasonal when an earlier comparable change has the same sign and a size within `tolerance`
    (relative) of the current change.
    """
    first = daily["date"].min()
    cur_pct = pct_change(window_value(daily, spec, spec.current), window_value(daily, spec, spec.baseline))
    comps = []
    for lag in _lags(spec):
        cur_w, base_w = spec.current.shifted(lag), spec.baseline.shifted(lag)
        if base_w.start < first or (lag == 7 and spec.baseline_offset == 7):
            continue
        prior = pct_change(window_value(daily, spec, cur_w), window_value(daily, spec, base_w))
        comps.append(SeasonalComparison(lag_days=lag, change_pct=prior))
    best = None
    if cur_pct is not None:
        scored = [c for c in comps if c.change_pct is not None]
        best = min(scored, key=lambda c: abs((c.change_pct or 0) - cur_pct), default=None)
    seasonal = bool(
        best is not None
        and cur_pct is not None
        and best.change_pct is not None
        and cur_pct != 0
        and best.change_pct * cur_pct > 0
        and abs(best.change_pct - cur_pct) <= tolerance * abs(cur_pct)
    )
    return Seasonality(
        metric=spec.metric,
        change_pct=cur_pct,
        comparisons=comps,
        best_lag_days=best.lag_days if best else None,
        best_change_pct=best.change_pct if best else None,
        seasonal=seasonal,
        available=bool(comps),
    )
