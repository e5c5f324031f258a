"""Scoring daily series for the morning scan, all series at once (vectorised).

What a day (or a window of days) is compared with: the median of the same window at the
`baseline_windows` (5) earlier positions the baseline names (for a window shorter than a week and
`previous`, the same weekdays 1-5 weeks back), so two odd days in the baseline (Christmas and New
Year, always on the same weekday a week apart; a holiday and a storm) cannot move it and the weeks
after an event are no "echo". An odd count: a median of four is the mean of its middle two, which
one of two odd days drags halfway. Windows that stood out against their own plain median are then
left out (`_usual`): the day a five-week fall ends is no rise against the fall. The history the
move is judged against is scored the same way (its spread: the standard deviation within three
MADs, `_spread`), in the units `analysis.movement` reads: a ratio's change in points,
a sum's in percent; a small count's on the square-root scale, where counting noise is the same at
every level (0 -> 2 is noise, 0 -> 159 is not). All earlier windows are read (the investigation
reads its last 20): twenty same weekdays cannot tell a one-day 40% drop of one station at the
threshold, the whole history can (benchmarks/triage_replay.py: 22/30 planted drops with 20, 30/30).
A day the whole table has no rows on, on a weekday that usually has rows, is an outage: a window
that holds it is no value (never zeros), neither a baseline nor history.
"""

from __future__ import annotations

import math
import warnings
from datetime import date, timedelta
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel
from scipy import stats

from investigator.analysis.movement import MIN_HISTORY
from investigator.analysis.spec import Window

Scale = Literal["percent", "points", "count"]
MAD_EFFICIENCY = 0.37  # a MAD spread is worth this share of as many points' standard deviation
CLIPPED_EFFICIENCY = 0.9  # the standard deviation of the points within 3 MADs: nearly a plain one's
CLIP = 3.0  # points beyond this many robust spreads are left out of the clipped standard deviation
TRUNCATED_SD = 0.9866  # the standard deviation of a normal cut at 3 sd, in sd
COUNT_LEVEL = 100.0  # an integer series whose typical window is below this is scored as a count
COUNT_NOISE = 0.6  # sd of sqrt(count) - sqrt(median of 4-5 counts) for Poisson counts: about sqrt(1/4 + 0.1)


class Scoring(BaseModel):
    """How the morning's scores are made (the config's keys)."""

    baseline_windows: int = 5
    min_volume: float = 10.0
    threshold: float = 3.0
    expected_years: int = 2


def outage_days(dates: list[date], first: date, last: date) -> set[date]:
    """Days between `first` and `last` with no row at all, on a weekday that has rows in most
    weeks: a load that did not arrive, not a quiet day (a table of weekdays only keeps its
    weekends as zeros)."""
    have = set(dates)
    weeks = max(1, ((last - first).days + 1) // 7)
    per_weekday = np.bincount([d.weekday() for d in have], minlength=7)
    regular = {w for w in range(7) if per_weekday[w] >= 0.5 * weeks}
    out = set()
    d = first
    while d <= last:
        if d not in have and d.weekday() in regular:
            out.add(d)
        d += timedelta(days=1)
    return out


def spacing(length: int, offset: int) -> int:
    """Days between the earlier windows the baseline's median reads: the baseline's own distance,
    a week when that is under a week for a window under a week (weekdays stay aligned)."""
    return 7 if length < 7 and offset < 7 else offset


def score_daily(
    num: pd.DataFrame,
    den: pd.DataFrame | None,
    current: Window,
    offset: int,
    base_days: int | None = None,
    *,
    scoring: Scoring | None = None,
    outages: set[date] | None = None,
    counts: bool = False,
    windowed: tuple[bool, bool] = (False, False),
) -> pd.DataFrame:
    """Every series' window value, baseline, change and robust z at once (daily data, windows of
    days). `base_days` is the baseline's length when it differs from the window's (`avg4`: four
    windows together, their mean: kept as configured, not a median), `offset` the days between the
    two windows' ends, `counts` whether the measure counts things (integers), `windowed` whether
    the numerator's (denominator's) frame already holds each window's value (a distinct count over
    the window ending on each day, `triage.distinct`) rather than each day's. Columns: current,
    baseline, change, change_pct, z, scale, history (points scored against), expected (earlier
    years that moved alike, as "k/n"), note."""
    s = scoring or Scoring()
    days = pd.date_range(num.index.min(), max(num.index.max(), current.end), freq="D").date
    length = current.days
    gone = np.array([d in (outages or set()) for d in days])
    num = num.reindex(days).fillna(0.0)
    num[gone] = np.nan
    dens = None
    if den is not None:
        dens = den.reindex(days).fillna(0.0)
        dens[gone] = np.nan

    touched = pd.Series(gone).rolling(length, min_periods=1).max().to_numpy() > 0

    def summed(frame: pd.DataFrame, whole: bool, periods: int) -> pd.DataFrame:
        if not whole:
            return frame.rolling(periods).sum()
        return frame.mask(np.broadcast_to(touched[:, None], frame.shape))  # a window with an outage

    def rolled(periods: int) -> pd.DataFrame:
        out = summed(num, windowed[0], periods)
        if dens is None:
            return out if periods == length else out * (length / periods)
        den_w = summed(dens, windowed[1], periods)
        return out / den_w.where(den_w != 0)

    value = rolled(length)
    if base_days not in (None, length) and any(windowed):  # avgN of whole-window counts
        tiles = [
            value.shift(offset + length * k).to_numpy(dtype=float) for k in range((base_days or 0) // length)
        ]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            base = pd.DataFrame(np.nanmean(np.stack(tiles), axis=0), index=value.index, columns=value.columns)
    elif base_days not in (None, length):  # avgN: the mean of the N windows, as configured
        base = rolled(base_days or length).shift(offset)
    else:
        base = None
    v = value.to_numpy(dtype=float)
    row = days.tolist().index(current.end)
    ends = pd.DatetimeIndex(pd.to_datetime(list(days)))
    keep = np.asarray(ends.date <= current.start - timedelta(days=1))
    if length % 7:
        keep &= np.asarray(ends.day_of_week == pd.Timestamp(current.end).day_of_week)
    hist_rows = np.flatnonzero(keep)  # every earlier window: 20 same weekdays cannot tell a 40% day
    scale = _scales(v[hist_rows], num, den is not None, counts)
    if base is not None:
        b = base.to_numpy(dtype=float)
    else:
        step = spacing(length, offset)
        first = offset if s.baseline_windows == 1 else step
        b = _median(v, first, step, s.baseline_windows)
        if s.baseline_windows > 1:  # leave out the windows that stood out against their own median
            change, _ = _changes(v, b, scale)
            med, spread = _spread(change[hist_rows], scale)
            with np.errstate(all="ignore"):
                odd = np.abs((change - med) / spread) >= s.threshold
            b = _usual(v, odd, first, step, s.baseline_windows, b)
    change, pct = _changes(v, b, scale)
    hist = change[hist_rows]
    n = np.sum(~np.isnan(hist), axis=0)
    med, spread = _spread(hist, scale)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a series without history is all NaN
        z = np.where((n >= MIN_HISTORY) & (spread > 0), (change[row] - med) / spread, np.nan)
        z = calibrated(z, n * min(1.0, math.sqrt((1 if length % 7 == 0 else 7) / length)), CLIPPED_EFFICIENCY)
        # a short count series is still a count: its counting noise alone scores it
        short = (scale == "count") & np.isnan(z)
        z = np.where(short, change[row] / COUNT_NOISE, z)
    cur, prev = v[row], b[row]
    notes = _notes(scale, cur, prev, n, z, short, s.min_volume, gone[row])
    expected = _expected(change, days, row, z, med, spread, s)
    return pd.DataFrame(
        {
            "current": cur,
            "baseline": prev,
            "change": cur - prev,
            "change_pct": pct[row],
            "z": z,
            "scale": scale,
            "history": n,
            "expected": expected,
            "note": notes,
        },
        index=num.columns,
    )


def _shifted(a: np.ndarray, k: int) -> np.ndarray:
    """`a`'s rows moved `k` rows later (the window `k` days before each day), NaN where none."""
    out = np.full_like(a, np.nan)
    if k < len(a):
        out[k:] = a[: len(a) - k]
    return out


def _median(v: np.ndarray, first: int, step: int, windows: int) -> np.ndarray:
    """Each day's median of the `windows` earlier windows `first`, `first + step`, ... days back."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: no baseline there
        stacked = np.stack([_shifted(v, first + step * k) for k in range(windows)])
        return np.asarray(np.nanmedian(stacked, axis=0), dtype=float)


def _usual(
    v: np.ndarray, odd: np.ndarray, first: int, step: int, windows: int, plain: np.ndarray
) -> np.ndarray:
    """Each day's median of the latest `windows` earlier windows that did not stand out (`odd`:
    beyond the threshold against their own plain median), among the last `windows + 3`; the plain
    median where fewer than half of `windows` are left. Not recursive: whether a window stood out
    is read from the data, never from what an earlier morning flagged, so the score is the same
    whenever it is computed. A new level stops standing out once the plain median holds it (three
    weeks of five), and is the baseline three weeks later."""
    usual = np.where(odd, np.nan, v)
    cands = np.stack([_shifted(usual, first + step * j) for j in range(windows + 3)])
    valid = ~np.isnan(cands)
    kept = valid & (np.cumsum(valid, axis=0) <= windows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        median = np.nanmedian(np.where(kept, cands, np.nan), axis=0)
    return np.where(kept.sum(axis=0) >= (windows + 1) // 2, median, plain)


def _changes(v: np.ndarray, b: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each window's change against its baseline in its series' units (points, square roots of
    counts, percent), and its relative change."""
    with np.errstate(all="ignore"):
        pct = np.where((b != 0) & np.isfinite(b), (v - b) / np.abs(b), np.nan)
        roots = np.sqrt(np.clip(v, 0, None)) - np.sqrt(np.clip(b, 0, None))
    return np.where(scale == "points", v - b, np.where(scale == "count", roots, pct)), pct


def _spread(hist: np.ndarray, scale: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The history's median change and robust spread: the standard deviation of the changes within
    three MADs of the median (the odd days out, as the MAD would leave them, but from nearly all
    the information of the ordinary ones: a MAD from 150 points is as uncertain as a standard
    deviation from 55, which `calibrated` must pay for at the threshold), else the MAD, else the
    plain standard deviation; a count's never under its counting noise."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a series without history is all NaN
        med = np.nanmedian(hist, axis=0)
        mad = 1.4826 * np.nanmedian(np.abs(hist - med), axis=0)
        inside = np.where(np.abs(hist - med) <= CLIP * mad, hist, np.nan)
        spread = np.nanstd(inside, axis=0, ddof=1) / TRUNCATED_SD
        spread = np.where(spread > 0, spread, mad)
        spread = np.where(spread > 0, spread, np.nanstd(hist, axis=0))
        spread = np.where(scale == "count", np.fmax(spread, COUNT_NOISE), spread)
    return med, spread


def _scales(hist_values: np.ndarray, num: pd.DataFrame, ratio: bool, counts: bool) -> np.ndarray:
    """Each series' scale: a ratio in points; a count whose typical window is small on the square
    root scale; anything else in percent."""
    if ratio:
        return np.full(num.shape[1], "points", dtype=object)
    whole = counts or bool(np.all(np.mod(num.fillna(0.0).to_numpy(), 1) == 0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        level = np.nanmedian(hist_values, axis=0) if len(hist_values) else np.full(num.shape[1], np.nan)
    small = whole & ~(level >= COUNT_LEVEL)
    return np.where(small, "count", "percent").astype(object)


def _notes(
    scale: np.ndarray,
    cur: np.ndarray,
    base: np.ndarray,
    n: np.ndarray,
    z: np.ndarray,
    short: np.ndarray,
    min_volume: float,
    outage: bool,
) -> list[str | None]:
    """Why a series' score is missing or not to be trusted, in words a reader acts on."""
    out: list[str | None] = []
    for i in range(len(scale)):
        if outage:
            out.append("no rows on the window's last day (an outage?)")
        elif scale[i] == "count" and not (max(np.nan_to_num(cur[i]), np.nan_to_num(base[i])) >= min_volume):
            out.append(f"a count under min_volume {min_volume:g}: not scored")
        elif short[i]:
            out.append(f"{int(n[i])} earlier windows: scored against counting noise alone")
        elif np.isnan(z[i]):
            out.append(f"not scored: {int(n[i])} earlier windows ({MIN_HISTORY} needed)")
        else:
            out.append(None)
    return out


def _expected(
    change: np.ndarray,
    days: np.ndarray,
    row: int,
    z: np.ndarray,
    med: np.ndarray,
    spread: np.ndarray,
    s: Scoring,
) -> list[str | None]:
    """For each series, "k/n" when the same window moved alike in k of the n earlier years the
    data holds; None with fewer than `expected_years` years. A year back is read on the same
    date (Christmas) and on the same weekday on either side of it (52 or 53 weeks back, 104 or
    105 two years back: a holiday on the fourth Thursday of November moves with the weekday, so
    last year's Thanksgiving is 364 or 371 days back). Alike: the same sign, at least half the
    threshold and at least half the move itself, in the score's units (a holiday's -55% every
    year is alike; a chance -8% beside a -40% drop is not)."""
    end: date = days[row]
    index = {d: i for i, d in enumerate(days)}
    years: list[np.ndarray] = []
    k = 1
    now = change[row]
    while True:
        rows = [r for r in (index.get(d) for d in year_back(end, k)) if r is not None]
        if not rows:
            break
        with np.errstate(all="ignore"):
            then = change[rows]
            zs = (then - med) / spread
            alike = (np.sign(zs) == np.sign(z)) & (np.abs(zs) >= s.threshold / 2)
            alike &= np.abs(then - med) >= np.abs(now - med) / 2
        years.append(np.any(alike, axis=0))
        k += 1
    if len(years) < s.expected_years:
        return [None] * len(z)
    hits = np.sum(np.stack(years), axis=0)
    return [f"{int(h)}/{len(years)}" if h * 2 > len(years) else None for h in hits]


def year_back(d: date, k: int) -> list[date]:
    """The days that stand for `d` `k` years back: the same date, and the same weekday on either
    side of it (for k = 1: 364 or 371 days back when the date is not itself that weekday)."""
    same = _years_back(d, k)
    weeks = (d - same).days // 7
    return list(dict.fromkeys([same, d - timedelta(weeks=weeks), d - timedelta(weeks=weeks + 1)]))


def _years_back(d: date, k: int) -> date:
    try:
        return d.replace(year=d.year - k)
    except ValueError:  # 29 February
        return d.replace(year=d.year - k, day=28)


def for_family(z: np.ndarray, m: np.ndarray | int) -> np.ndarray:
    """A segment's z as the normal score of the chance that the most unusual of `m` segments of its
    dimension moves this much on an ordinary morning (Sidak): a z of 3 then means one morning in
    about 370 per dimension, whether it has 3 values or 50. Without it twenty stations at z 3 give
    a chance flag every three weeks (`benchmarks/triage_replay.py`: 1.5 unexplained alert mornings
    a month on the riders' 20 stations)."""
    z = np.asarray(z, dtype=float)
    with np.errstate(all="ignore"):
        p = 2 * stats.norm.sf(np.abs(z))
        family = -np.expm1(np.maximum(np.asarray(m, dtype=float), 1.0) * np.log1p(-p))
        out = np.sign(z) * stats.norm.isf(family / 2)
    return np.where(np.isnan(z) | ~np.isfinite(out), z, out)


def calibrated(z: np.ndarray, n: np.ndarray, efficiency: float = MAD_EFFICIENCY) -> np.ndarray:
    """A z from `n` history points as the normal score with the same tail probability: the median
    and MAD of a short history are themselves uncertain (a t tail, and the new point's own
    prediction error), so 16 points need a bigger move than 80 for the same score. Without this a
    3-day window with four months of history is flagged in one series out of twenty by chance."""
    n = np.maximum(np.asarray(n, dtype=float), 2.0)
    t = np.abs(z) / np.sqrt(1 + np.pi / 2 / n)
    with np.errstate(all="ignore"):
        tail = stats.t.sf(t, df=np.maximum(efficiency * (n - 1), 1.0))
        out = np.sign(z) * np.minimum(stats.norm.isf(tail), 50.0)
    return np.where(np.isnan(z), np.nan, out)
