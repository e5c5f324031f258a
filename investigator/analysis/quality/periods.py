"""The data's periods as the checks read them: days, weeks, months, years.

Every check works in the data's own periods: a monthly series has missing months, never missing
days, and a daily one is compared with the same weekday of earlier weeks.
"""

from __future__ import annotations

from datetime import date, timedelta

import numpy as np
import pandas as pd

from ..grain import Grain
from ..spec import AnalysisSpec, Window

LOOKBACK = {"week": 8, "month": 12, "quarter": 8, "year": 8}  # history periods the segment checks read


def _daily_grain(spec: AnalysisSpec) -> bool:
    return spec.grain == "day" and spec.grain_step == 1


def _periods(w: Window, spec: AnalysisSpec) -> list[date]:
    """The data's periods inside a window, by their first day."""
    if _daily_grain(spec):
        return [d.date() for d in pd.date_range(w.start, w.end, freq="D")]
    return spec.periods.periods(w.start, w.end)


def _prior(spec: AnalysisSpec, period: date, k: int) -> date:
    """The comparable period `k` steps back: the same weekday k weeks earlier for daily data, else
    the k-th period before."""
    if _daily_grain(spec):
        return period - timedelta(days=7 * k)
    return spec.periods.shift(period, -k)


def _expected(series: pd.Series, spec: AnalysisSpec, period: date, k: int = 4) -> float:
    """Mean of the `k` comparable earlier periods that have data (same weekday for daily data)."""
    vals = [series.get(_prior(spec, period, j)) for j in range(1, k + 1)]
    vals = [v for v in vals if v is not None and np.isfinite(v) and v > 0]
    return float(np.mean(vals)) if vals else float("nan")


def _expected_by_weekday(series: pd.Series, day: date, weeks: int = 4) -> float:
    """Mean of the same weekday over the previous weeks that have data."""
    prior = [day - pd.Timedelta(days=7 * k) for k in range(1, weeks + 1)]
    vals = [series.get(d.date() if hasattr(d, "date") else d) for d in prior]
    vals = [v for v in vals if v is not None and np.isfinite(v) and v > 0]
    return float(np.mean(vals)) if vals else float("nan")


def _unit(spec: AnalysisSpec, n: int) -> str:
    return spec.count_label(n)


def _labels(spec: AnalysisSpec, periods: list[date], most: int = 4) -> str:
    g = spec.periods
    shown = ", ".join(g.label(p) for p in periods[:most])
    return shown + (f" and {len(periods) - most} more" if len(periods) > most else "")


def _last_period(daily: pd.DataFrame) -> date | None:
    live = daily.loc[daily["rows"] > 0, "date"]
    return None if live.empty else live.max()


REGULAR = 0.95  # a period is expected to have rows when its kind had rows this often before


def expected_periods(daily: pd.DataFrame, spec: AnalysisSpec, periods: list[date]) -> list[date]:
    """The periods among `periods` the data's own rhythm says should have rows.

    Daily data: the weekdays that had rows on nearly all of their days before the window (a
    weekday-only series does not miss its weekends; in sparse event data, where a weekday is quiet
    now and then, a quiet day is no missing day). Coarser data: every period, when the history
    before the window has rows in nearly all its periods.
    """
    start = spec.current.start
    hist = sorted(d for d in daily.loc[daily["rows"] > 0, "date"] if d < start)
    if len(hist) < 2:
        return periods
    if _daily_grain(spec):
        span = pd.date_range(hist[0], start - pd.Timedelta(days=1).to_pytimedelta(), freq="D")
        if len(span) < 14:
            return periods
        have = pd.Series([d.weekday() for d in hist]).value_counts()
        days = pd.Series(span.day_of_week).value_counts()
        regular = {int(k) for k in days.index if have.get(k, 0) >= REGULAR * days[k]}
        return [p for p in periods if p.weekday() in regular]
    g = spec.periods
    grid = g.index(start) - g.index(hist[0])
    return periods if len(hist) >= REGULAR * grid else []


def lookback_start(spec: AnalysisSpec) -> date:
    """Where the per-segment checks start reading: the baseline, and at least five weeks (daily
    data) or a year or so of periods before the current window."""
    if _daily_grain(spec):
        back = spec.current.start - timedelta(days=35)
    else:
        g: Grain = spec.periods
        back = g.shift(spec.current.start, -LOOKBACK[g.unit])
    return min(spec.baseline.start, back)
