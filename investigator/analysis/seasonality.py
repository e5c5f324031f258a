"""Seasonality: did the same movement happen in the comparable period a year (or week) earlier?

Testable only where a comparable earlier period exists and the window is shorter than the season:
daily data compares 364 and 365 days back (and a week back for windows under a week), weekly data
52 weeks back, monthly and quarterly data the same months a year earlier. Yearly data has no season
inside a year, and a year-over-year baseline already takes the season out.
"""

from __future__ import annotations

from typing import Literal

import pandas as pd
from pydantic import BaseModel

from .grain import Grain
from .movement import baseline_value, pct_change, window_value
from .spec import AnalysisSpec, Window


class SeasonalComparison(BaseModel):
    lag_days: int  # days between the current window's start and the earlier one's
    change_pct: float | None
    lag: str = ""  # the lag in the data's periods: "364 days", "52 weeks", "12 months"


class Seasonality(BaseModel):
    kind: Literal["seasonality"] = "seasonality"
    metric: str
    change_pct: float | None
    comparisons: list[SeasonalComparison]
    best_lag_days: int | None
    best_change_pct: float | None
    seasonal: bool
    available: bool  # enough history for at least one comparison
    reason: str | None = None  # why it cannot be tested, when not available
    best_lag: str | None = None  # the best comparison's lag in words: "12 months", "364 days"
    alike: int = 0  # earlier years whose same windows moved the current change's way
    years: int = 0  # earlier years compared (data coarser than days: up to `YEARS`)


def _lags(spec: AnalysisSpec) -> tuple[Grain, list[int], str | None]:
    """The grain lags are counted in, the lags to try, and why none applies (if so)."""
    g = spec.window_grain
    if spec.baseline_kind == "yoy":
        return g, [], "the yoy baseline already compares with the same period a year earlier"
    if g.unit == "day":
        if spec.current.days >= 364:
            return g, [], "the window is a year or longer, as long as the season itself"
        # 364 keeps weekdays aligned, 365 keeps calendar dates; short windows also compare a week back
        return g, [364, 365] + ([7] if spec.current.days < 7 else []), None
    if g.unit == "year":
        return g, [], f"the data is {g.adjective}: there is no season within a year to compare"
    per_year = 52 if g.unit == "week" else 12
    size = g.step if g.unit == "week" else g.months or 1
    if per_year % size:
        return g, [], f"the data is {g.adjective}: no period falls a whole year earlier"
    lag = per_year // size
    if spec.window_periods >= lag:
        return g, [], "the window is a year or longer, as long as the season itself"
    return g, [lag * k for k in range(1, YEARS + 1)], None


YEARS = 5  # earlier years whose same windows are compared, where the data has them
MOST = 2 / 3  # seasonal over several years: this many moved alike, and their median is close


def _shifted(g: Grain, w: Window, lag: int) -> Window:
    if g.unit == "day":
        return w.shifted(lag)
    start, end = g.shift_window(w.start, w.end, -lag)
    return Window(start=start, end=end)


def _lag_text(g: Grain, lag: int) -> str:
    if g.months is not None:
        return f"{lag * g.months} months"
    return Grain(g.unit, 1).count(lag * g.step)


def seasonality(daily: pd.DataFrame, spec: AnalysisSpec, tolerance: float = 0.35) -> Seasonality:
    """Compare the current change with the same windows shifted back by each seasonal lag.

    Seasonal when an earlier comparable change has the same sign and a size within `tolerance`
    (relative) of the current change.
    """
    first = daily["date"].min()
    cur_pct = pct_change(window_value(daily, spec, spec.current), baseline_value(daily, spec))
    comps = []
    g, lags, reason = _lags(spec)
    for lag in lags:
        cur_w, base_w = _shifted(g, spec.current, lag), _shifted(g, spec.baseline, lag)
        if base_w.start < first or (lag == 7 and spec.baseline_offset == 7):
            continue
        prior = pct_change(window_value(daily, spec, cur_w), baseline_value(daily, spec, base_w))
        comps.append(
            SeasonalComparison(
                lag_days=(spec.current.start - cur_w.start).days, change_pct=prior, lag=_lag_text(g, lag)
            )
        )
    if lags and not comps:
        back = _shifted(g, spec.baseline, lags[0])
        reason = (
            f"the history starts {first}, after the comparable period a year back ({back.start} "
            f"to {_shifted(g, spec.current, lags[0]).end})"
        )
    best = None
    scored = [c for c in comps if c.change_pct is not None]
    if cur_pct is not None:
        # several years: the comparable period a year earlier is the one to show; days: the closer
        # of 364 and 365 days back (weekdays or dates aligned), or a week back for short windows
        best = (
            (scored[0] if scored else None)
            if g.unit != "day"
            else min(scored, key=lambda c: abs((c.change_pct or 0) - cur_pct), default=None)
        )
    alike = [c for c in scored if cur_pct and (c.change_pct or 0) * cur_pct > 0]
    if g.unit != "day" and len(scored) >= 2 and cur_pct:
        # several years: most moved this way, and the usual move is about this size
        usual = float(pd.Series([c.change_pct for c in scored]).median())
        seasonal = len(alike) >= MOST * len(scored) and abs(usual - cur_pct) <= tolerance * abs(cur_pct)
    else:
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
        reason=None if comps else reason,
        best_lag=best.lag if best else None,
        alike=len(alike),
        years=len(scored),
    )
