"""Movement of a metric between two windows, and whether it is outside normal variation."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel

from .counts import is_count, within_count_noise
from .records import records
from .spec import AnalysisSpec, Window

Z_SIGNIFICANT = 2.0  # an unusual move: worth explaining (a person acts on a 1-in-20 window)
Z_STRONG = 3.0  # far outside normal variation: what a high confidence needs
MIN_HISTORY = 8  # comparable windows (non-overlapping) below which history cannot judge a move
RECENT = 20  # comparable windows of the series' recent history that judge the move
RECORD = 40  # comparable windows past which a move beyond every one of them is unusual whatever z says


class Movement(BaseModel):
    """Current vs baseline value of the metric, with a robust z-score against history."""

    kind: Literal["movement"] = "movement"
    metric: str
    current: float
    baseline: float
    change: float
    change_pct: float | None
    z: float | None
    history_points: int
    history_median_pct: float | None
    history_spread_pct: float | None
    significant: bool
    comparable_windows: float = 0.0  # earlier windows, counted as if they did not overlap
    short_history: bool = False  # too few comparable windows to tell a move from normal variation
    strong: bool = False  # |z| >= Z_STRONG: far outside normal variation
    in_points: bool = False  # a ratio: history and z are in the ratio's own units, not percent
    record: bool = False  # beyond every earlier comparable change (at least `RECORD` of them)
    counts: bool = False  # the metric counts events: history and z in square roots (`counts.py`)
    level_record: int = 0  # the value is a record against this many earlier windows (`records.py`)
    reverses: int = 0  # the windows in a row that moved the other way before this one (`records.py`)


WINDOWS = "windows"  # the per-period frame's `attrs`: windowed distinct counts (`queries.daily_totals`)


def window_value(daily: pd.DataFrame, spec: AnalysisSpec, window: Window) -> float:
    """The metric over a window from a per-period frame (`date` plus the measures); NaN when the
    window holds no value at all (nothing, or only nulls), never 0. A distinct count over the
    window is the engine's count of the whole window (`daily.attrs["windows"]`), never the sum of
    its periods' counts; a window of several windows' length (an `avgN` baseline) adds them up."""
    num = _measure_value(daily, spec, spec.numerator, window)
    if spec.denominator is None:
        return num
    den = _measure_value(daily, spec, spec.denominator, window)
    return num / den if den else float("nan")


def _measure_value(daily: pd.DataFrame, spec: AnalysisSpec, name: str, window: Window) -> float:
    if name in spec.windowed:
        g, counts = spec.window_grain, _windows(daily, spec)[name]
        values = [counts.get(g.index(w.end), np.nan) for w in spec.tiles(window)]
        return float(np.nansum(values)) if not np.isnan(values).all() else float("nan")
    # numpy, not a pandas mask and `.loc`: a score reads every earlier window this way (`records`),
    # hundreds of calls a run; the sum is pandas' own (nulls as 0, NaN when all are null)
    dates = daily["date"].to_numpy()
    inside = (dates >= window.start) & (dates <= window.end)
    picked = daily[name].to_numpy(dtype=float, na_value=np.nan)[inside]
    held = ~np.isnan(picked)
    return float(np.where(held, picked, 0.0).sum()) if held.any() else float("nan")


def _windows(daily: pd.DataFrame, spec: AnalysisSpec) -> pd.DataFrame:
    got = daily.attrs.get(WINDOWS)
    if got is None:
        raise ValueError(
            f"{spec.metric}: a distinct count over a window is no sum of periods; pass the frame "
            "daily_totals(table, spec) returned (its attrs hold each window's own count)"
        )
    out: pd.DataFrame = got
    return out


def baseline_value(daily: pd.DataFrame, spec: AnalysisSpec, window: Window | None = None) -> float:
    """The baseline as compared with the current window: its value over `window` (the spec's
    baseline by default), a sum scaled to the current window's length (`spec.baseline_scale`)."""
    return spec.scaled(window_value(daily, spec, window or spec.baseline))


def pct_change(current: float, baseline: float) -> float | None:
    """(current - baseline) / |baseline|: for a negative metric (a loss) a move up is positive."""
    if baseline == 0 or not np.isfinite(baseline) or not np.isfinite(current):
        return None
    return (current - baseline) / abs(baseline)


def _change(value: pd.Series, base: pd.Series, spec: AnalysisSpec, counts: bool = False) -> pd.Series:
    """A window's change against its baseline: relative for a sum (a series whose level grew
    100-fold is judged on percent changes), in the ratio's own units for a ratio (a share's move is
    read in points, and a small share's percent swings are noise), in square roots for a count
    (`counts.py`: a count's noise grows with its square root, so 6 -> 14 events is read on the
    scale of how the count swings, not as +133%)."""
    if counts:
        return np.sqrt(value.clip(lower=0)) - np.sqrt(base.clip(lower=0))
    change = value - base if spec.is_ratio else (value - base) / base.abs()
    return change.replace([np.inf, -np.inf], np.nan)


def overlap(spec: AnalysisSpec) -> float:
    """How many of the history's windows share their periods with each other: daily windows of
    whole weeks are read at every day's end (a 7-day window overlaps 6 others), others a week
    apart; windows of periods step one period at a time."""
    if spec.window_grain.unit == "day":
        length = spec.current.days
        return float(length) if length % 7 == 0 else max(1.0, length / 7)
    return float(max(1, spec.window_periods))


def historical_changes(daily: pd.DataFrame, spec: AnalysisSpec, counts: bool = False) -> np.ndarray:
    """Relative changes of every earlier same-length window against its own baseline.

    Windows are counted in the periods the current one is made of (days, weeks, months, ...) and
    lie the same number of periods apart as the current window and its baseline. On daily data,
    windows end on the same weekday as the current one unless the window spans whole weeks, so
    day-of-week effects cancel; only windows that end before the current window starts are used.
    """
    g = spec.window_grain
    if spec.windowed:
        return _windowed_changes(daily, spec, counts)
    if g.unit != "day":
        return _period_changes(daily, spec, counts)
    length, offset = spec.current.days, spec.baseline_offset
    full = daily.set_index("date").reindex(
        pd.date_range(daily["date"].min(), daily["date"].max(), freq="D").date, fill_value=0.0
    )
    value = _rolling_value(full, spec, length, length)
    base = _rolling_value(full, spec, spec.baseline.days, length).shift(offset)
    change = _change(value, base, spec, counts)
    ends = pd.Series(pd.to_datetime(full.index), index=full.index)
    last_end = spec.current.start - timedelta(days=1)
    keep = (ends.dt.date <= last_end) & change.notna()
    if length % 7:
        weekday = keep & (ends.dt.day_of_week == pd.Timestamp(spec.current.end).day_of_week)
        # a one-day shock in a short file: the same weekday has too few days to judge it, the days
        # around it vary too (day-of-week swings included, which only widens the yardstick)
        keep = weekday if length > 1 or weekday.sum() >= MIN_HISTORY else keep
    out: np.ndarray = change[keep].to_numpy(dtype=float)
    return out


def _rolling_value(full: pd.DataFrame, spec: AnalysisSpec, periods: int, length: int) -> pd.Series:
    """The metric over every `periods`-long run of rows ending at each row, as compared with a
    window of `length` periods: a sum scaled by `length / periods` (the baseline's scaling), a
    ratio as is."""
    num = full[spec.numerator].rolling(periods, min_periods=periods).sum()
    if spec.denominator:
        out: pd.Series = num / full[spec.denominator].rolling(periods, min_periods=periods).sum()
        return out
    return num if periods == length else num * (length / periods)


def _period_changes(daily: pd.DataFrame, spec: AnalysisSpec, counts: bool = False) -> np.ndarray:
    """`historical_changes` over periods: a period with no rows is missing (NaN) in data of weeks,
    months or years, and zero in daily data summed to months."""
    g = spec.window_grain
    idx = pd.Series([g.index(d) for d in daily["date"]], index=daily.index)
    cols = spec.measures
    per = daily[cols].groupby(idx).sum(min_count=1)
    full = per.reindex(range(int(idx.min()), int(idx.max()) + 1))
    if spec.grain == "day":
        full = full.fillna(0.0)
    length, offset = spec.window_periods, spec.baseline_lag
    value = _rolling_value(full, spec, length, length)
    base = _rolling_value(full, spec, spec.baseline_periods, length).shift(offset)
    change = _change(value, base, spec, counts)
    keep = (full.index < g.index(spec.current.start)) & change.notna()
    out: np.ndarray = change[keep].to_numpy(dtype=float)
    return out


def _windowed_changes(daily: pd.DataFrame, spec: AnalysisSpec, counts: bool = False) -> np.ndarray:
    """`historical_changes` when a measure is a distinct count over the window: every window's
    value is read off the engine's counts of the window ending at each period, a sum's summed."""
    g, length = spec.window_grain, spec.window_periods
    counted = _windows(daily, spec)
    idx = pd.Series([g.index(d) for d in daily["date"]], index=daily.index)
    sums = [m for m in spec.measures if m not in spec.windowed]
    per = daily[sums].groupby(idx).sum(min_count=1).reindex(counted.index)
    if spec.grain == "day":
        per = per.fillna(0.0)
    parts = {m: per[m].rolling(length, min_periods=length).sum() for m in sums}
    parts |= {m: counted[m] for m in spec.windowed}
    lag, n = spec.baseline_lag, len(spec.tiles(spec.baseline))
    base = {m: sum(v.shift(lag + k * length) for k in range(n)) for m, v in parts.items()}
    num, den = spec.numerator, spec.denominator
    if den is None:
        value, before = parts[num], base[num] * spec.baseline_scale
    else:
        value, before = parts[num] / parts[den], base[num] / base[den]
    change = _change(value, before, spec, counts)
    keep = (change.index < g.index(spec.current.start)) & change.notna()
    if g.unit == "day" and length % 7:
        ends = pd.Series([g.at(int(i)) for i in change.index], index=change.index)
        weekday = keep & (pd.to_datetime(ends).dt.day_of_week == pd.Timestamp(spec.current.end).day_of_week)
        keep = weekday if length > 1 or weekday.sum() >= MIN_HISTORY else keep
    out: np.ndarray = change[keep].to_numpy(dtype=float)
    return out


def movement(daily: pd.DataFrame, spec: AnalysisSpec) -> Movement:
    """Compare the current window with the baseline and score the change against history."""
    cur = window_value(daily, spec, spec.current)
    base = baseline_value(daily, spec)
    counts = is_count(spec, daily)
    scored = _scored(spec, cur, base, historical_changes(daily, spec, counts), counts)
    record, run = records(daily, spec, window_value)
    return scored.model_copy(update={"level_record": record, "reverses": run})


def movements(
    frame: pd.DataFrame, spec: AnalysisSpec, key: str, windows: pd.DataFrame | None = None
) -> dict[Any, Movement]:
    """`movement` of every series in a long frame (`date`, `key`, the numerator; one row per period
    and value at most), one per value of `key`, scored together: a dimension of hundreds of values
    took a pandas pass per value. A sum metric only (a ratio's segments have no own total).

    Each series keeps its own span, as `movement` of its rows alone would: its periods before its
    first row and after its last hold no value, not zero.
    """
    if spec.denominator is not None:
        raise ValueError("movements scores sum metrics only")
    if windows is not None:  # a distinct count over the window: each value's counts per window
        return _counted_movements(windows, spec)
    if frame.empty:
        return {}
    wide = frame.pivot(index="date", columns=key, values=spec.numerator).sort_index()
    dates = pd.Series(wide.index)
    cur = _window_sums(wide, dates, spec.current)
    base = _window_sums(wide, dates, spec.baseline) * spec.baseline_scale
    changes = _wide_changes(wide, spec)
    return {
        value: _scored(spec, float(cur[i]), float(base[i]), col[~np.isnan(col)])
        for i, (value, col) in enumerate(zip(wide.columns, changes.T, strict=True))
    }


def _counted_movements(windows: pd.DataFrame, spec: AnalysisSpec) -> dict[Any, Movement]:
    """`movements` from each value's distinct count over the window ending at every period."""
    g = spec.window_grain
    at = windows.reindex([g.index(spec.current.end)]).to_numpy(dtype=float)[0]
    tiles = [windows.reindex([g.index(w.end)]).to_numpy(dtype=float)[0] for w in spec.tiles(spec.baseline)]
    base = np.sum(tiles, axis=0) * spec.baseline_scale
    changes = windowed_changes(windows, spec)
    return {
        value: _scored(spec, float(at[i]), float(base[i]), col[~np.isnan(col)])
        for i, (value, col) in enumerate(zip(windows.columns, changes.T, strict=True))
        if at[i] or base[i]
    }


def windowed_changes(windows: pd.DataFrame, spec: AnalysisSpec) -> np.ndarray:
    """`historical_changes` of every column of counts per window (rows: window ends on the grid of
    `spec.window_grain`): a (windows x columns) array, NaN where none."""
    g, length = spec.window_grain, spec.window_periods
    lag, n = spec.baseline_lag, len(spec.tiles(spec.baseline))
    base = sum(windows.shift(lag + k * length) for k in range(n)) * spec.baseline_scale
    change = ((windows - base) / base.abs()).replace([np.inf, -np.inf], np.nan)
    keep = np.asarray(windows.index < g.index(spec.current.start))
    if g.unit == "day" and length % 7:
        ends = pd.to_datetime(pd.Series([g.at(int(i)) for i in windows.index]))
        keep = keep & (ends.dt.day_of_week == pd.Timestamp(spec.current.end).day_of_week).to_numpy()
    out: np.ndarray = np.where(keep[:, None], change.to_numpy(dtype=float), np.nan)
    return out


def _window_sums(wide: pd.DataFrame, dates: pd.Series, w: Window) -> np.ndarray:
    """Each column's sum over a window; NaN where it has no row there (as `window_value`)."""
    mask = ((dates >= w.start) & (dates <= w.end)).to_numpy()
    out: np.ndarray = wide.loc[mask].sum(min_count=1).to_numpy(dtype=float)
    return out


def _spans(full: pd.DataFrame, fill: bool) -> pd.DataFrame:
    """Each column between its first and last value, the rest NaN; gaps inside filled with zero
    when `fill` (days without rows sum to nothing)."""
    held = full.notna().to_numpy()
    n = len(full)
    first = held.argmax(axis=0)
    last = n - 1 - held[::-1].argmax(axis=0)
    rows = np.arange(n)[:, None]
    inside = (rows >= first) & (rows <= last) & held.any(axis=0)
    values = full.to_numpy(dtype=float)
    if fill:
        values = np.where(np.isnan(values), 0.0, values)
    return pd.DataFrame(np.where(inside, values, np.nan), index=full.index, columns=full.columns)


def _wide_changes(wide: pd.DataFrame, spec: AnalysisSpec) -> np.ndarray:
    """`historical_changes` of every column: a (periods x columns) array, NaN where none."""
    g = spec.window_grain
    if g.unit == "day":
        days = pd.date_range(wide.index.min(), wide.index.max(), freq="D").date
        full = _spans(wide.reindex(days), fill=True)
        length, offset, base_length = spec.current.days, spec.baseline_offset, spec.baseline.days
        value = full.rolling(length).sum()
        ends = pd.Series(pd.to_datetime(full.index))
        keep = (ends.dt.date <= spec.current.start - timedelta(days=1)).to_numpy()
        if length % 7:
            keep = keep & (ends.dt.day_of_week == pd.Timestamp(spec.current.end).day_of_week).to_numpy()
    else:
        idx = np.array([g.index(d) for d in wide.index])
        per = wide.groupby(idx).sum(min_count=1)
        full = _spans(per.reindex(range(int(idx.min()), int(idx.max()) + 1)), fill=spec.grain == "day")
        length, offset, base_length = spec.window_periods, spec.baseline_lag, spec.baseline_periods
        value = full.rolling(length, min_periods=length).sum()
        keep = np.asarray(full.index < g.index(spec.current.start))
    base = value if base_length == length else full.rolling(base_length, min_periods=base_length).sum()
    base = base.shift(offset) * spec.baseline_scale
    change = ((value - base) / base.abs()).replace([np.inf, -np.inf], np.nan).to_numpy(dtype=float)
    out: np.ndarray = np.where(keep[:, None], change, np.nan)
    return out


def recent_z(
    now: float | None, hist: np.ndarray, spec: AnalysisSpec
) -> tuple[float | None, float | None, float | None]:
    """A robust z of `now` among the last `RECENT` comparable windows of `hist` (oldest first), with
    their median and spread; all None below `MIN_HISTORY` comparable windows (z alone None when
    there is nothing to score or no spread)."""
    step = overlap(spec)
    if len(hist) / step < MIN_HISTORY:
        return None, None, None
    recent = hist[-int(RECENT * step) :]
    med = float(np.median(recent))
    spread = float(1.4826 * np.median(np.abs(recent - med))) or float(np.std(recent)) or None
    z = (now - med) / spread if now is not None and spread else None
    return z, med, spread


def _scored(spec: AnalysisSpec, cur: float, base: float, hist: np.ndarray, counts: bool = False) -> Movement:
    """A movement from its two window values and its history of earlier changes (oldest first).

    The move is judged against the series' recent history: its last `RECENT` comparable windows,
    so that swings from an era when the level was far smaller or wilder do not make a record move
    look ordinary. Fewer than `MIN_HISTORY` comparable windows (overlapping windows counted as
    the independent ones they stand for) cannot judge it: `short_history`, and no z. A count
    that moved within its own Poisson noise did not move (`counts.py`)."""
    pct = pct_change(cur, base)
    points = spec.is_ratio
    if counts:
        now = float(np.sqrt(max(cur, 0.0)) - np.sqrt(max(base, 0.0))) if np.isfinite(cur + base) else None
    else:
        now = (cur - base if np.isfinite(cur) and np.isfinite(base) else None) if points else pct
    z, med, spread = recent_z(now, hist, spec)
    windows = len(hist) / overlap(spec)
    record = (
        now is not None
        and windows >= RECORD
        and bool((now < np.min(hist)) if now < 0 else (now > np.max(hist)))
    )  # the largest fall (or rise) in decades is no normal variation, however wild the series
    if cur == base or (counts and z is None and within_count_noise(base, cur)):
        significant = False  # it did not move, or (too little history) no more than a count's noise
        record = False
    elif z is not None:
        significant = abs(z) >= Z_SIGNIFICANT or record
    else:  # too little history to know normal variation: fall back to a plain threshold
        significant = pct is None or abs(pct) >= 0.05
    return Movement(
        metric=spec.metric,
        current=cur,
        baseline=base,
        change=cur - base,
        change_pct=pct,
        z=z,
        history_points=len(hist),
        history_median_pct=med,
        history_spread_pct=spread,
        significant=bool(significant),
        comparable_windows=round(windows, 1),
        short_history=windows < MIN_HISTORY,
        strong=bool(z is not None and abs(z) >= Z_STRONG and cur != base),
        in_points=points,
        record=bool(record),
        counts=counts,
    )
