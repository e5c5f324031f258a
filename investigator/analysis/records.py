"""A new record: the window's value is the lowest (or highest) of a long history of earlier windows
of the same length, a record no recent window set. Dashboards call such a value out, and a person
asks why even when the move into it was of an ordinary size (a batting average that fell to its
lowest in 97 years). A trending series sets a record nearly every window: those are no news.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import pandas as pd

from .spec import AnalysisSpec, Window

Value = Callable[[pd.DataFrame, AnalysisSpec, Window], float]  # `movement.window_value`

RECORD_WINDOWS = 20  # earlier windows a record must beat, and the recent ones that must have set none


def records(daily: pd.DataFrame, spec: AnalysisSpec, window_value: Value) -> tuple[int, int]:
    """The record (`_level_record`) and the steady run it ends (`_steady_run`), from one pass over
    the earlier windows."""
    earlier = _earlier_values(daily, spec, window_value)
    now = window_value(daily, spec, spec.current)
    return _level_record(earlier, now), _steady_run(earlier, now)


def level_record(daily: pd.DataFrame, spec: AnalysisSpec, window_value: Value) -> int:
    """The record part of `records`."""
    return records(daily, spec, window_value)[0]


def _level_record(earlier: list[float], now: float) -> int:
    """How many earlier windows the current one is a record against (lowest or highest of all of
    them), 0 when it is none, when the history is shorter than `RECORD_WINDOWS` windows, or when
    more than one of the last `RECORD_WINDOWS` windows set a record the same way (a trend)."""
    if len(earlier) < RECORD_WINDOWS or not math.isfinite(now):
        return 0
    low = now < min(earlier)
    if not (low or now > max(earlier)):
        return 0
    sign = -1.0 if low else 1.0
    records = 0
    for i in range(len(earlier) - RECORD_WINDOWS, len(earlier)):
        before = earlier[:i]
        records += bool(before) and sign * earlier[i] > max(sign * v for v in before)
    return len(earlier) if records <= 1 else 0


STEADY_SHARE = 0.8  # a run is steady when it covers most of the history (years of rises, then a fall)


def _steady_run(earlier: list[float], now: float) -> int:
    """How many windows in a row moved the other way before this one (a fall after seven rises in
    a row: 7), stepping back as `level_record` does; 0 when the move continues the run, or when the
    run is a streak inside a longer history rather than the history itself (a trending monthly
    series rises five months running every year or so)."""
    if len(earlier) < 2 or not math.isfinite(now) or now == earlier[-1]:
        return 0
    sign = 1.0 if now > earlier[-1] else -1.0
    run = 0
    for before, after in zip(earlier[-2::-1], earlier[::-1], strict=False):
        if sign * (after - before) < 0:
            run += 1
        else:
            break
    return run if run >= STEADY_SHARE * (len(earlier) - 1) else 0  # a steady history, not a streak in it


def _earlier_values(daily: pd.DataFrame, spec: AnalysisSpec, window_value: Value) -> list[float]:
    """The metric over earlier windows of the current one's length, oldest first, stepping back by
    the window or by the baseline's lag when that is longer: a July against earlier Julys when the
    baseline is a year back (a seasonal peak is no record against winter months), daily windows
    only in whole weeks (others mix weekdays)."""
    g, first = spec.window_grain, daily["date"].min()
    days = max(spec.current.days, spec.baseline_offset)
    periods = max(spec.window_periods, spec.baseline_lag)
    if g.unit == "day" and days % 7:
        return []
    out, w = [], spec.current
    while True:
        if g.unit == "day":
            w = w.shifted(days)
        else:
            start, end = g.shift_window(w.start, w.end, -periods)
            w = Window(start=start, end=end)
        if w.start < first:
            break
        value = window_value(daily, spec, w)
        if math.isfinite(value):
            out.append(value)
    return out[::-1]
