"""A deterministic generator of daily fact tables with one planted cause.

Tests and benchmarks use it to check that investigations find causes of any name, size and seed,
not just the bundled examples. The table has a `date` column, string dimensions and the measures
`sessions`, `orders` and `revenue`; the cause is planted in the last `window` days up to `end`.
"""

from __future__ import annotations

from datetime import date, timedelta
from itertools import product
from typing import Any

import numpy as np
import pandas as pd

DEFAULT_DIMS: dict[str, list[str]] = {
    "country": ["US", "GB", "DE", "FR", "BR", "IN", "JP", "CA"],
    "platform": ["web", "ios", "android"],
    "channel": ["organic", "paid_search", "social", "email", "affiliate"],
    "category": ["apparel", "electronics", "home", "beauty", "sports", "toys"],
}
CAUSES = (
    "segment_change", "rate_change", "mix_shift", "missing_data", "duplicates",
    "incomplete_recent_data", "seasonality", "broad_based", "new_segment", "no_change",
)  # fmt: skip


def _metric_for(cause: str) -> str:
    return {"rate_change": "orders/sessions", "mix_shift": "revenue/orders"}.get(cause, "revenue")


def generate(
    cause: str = "segment_change",
    *,
    seed: int = 0,
    dims: dict[str, list[str]] | None = None,
    segment: dict[str, str] | None = None,
    factor: float | None = None,
    days: int | None = None,
    end: date = date(2026, 3, 29),
    window: int = 7,
    scale: float = 1.0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Return (data, truth); truth has the shape of `../shared/scenarios/*/truth.json`."""
    if cause not in CAUSES:
        raise ValueError(f"unknown cause {cause!r}; choose from {', '.join(CAUSES)}")
    rng = np.random.default_rng(seed)
    dims = dims or DEFAULT_DIMS
    names = list(dims)
    days = days or (400 if cause == "seasonality" else 120)
    dates = [end - timedelta(days=days - 1 - i) for i in range(days)]
    leaves = pd.DataFrame(list(product(*dims.values())), columns=names)
    n_leaf, n_day = len(leaves), len(dates)
    # leaf levels: sessions, conversion and order value vary by segment
    level = rng.lognormal(3.5, 0.9, n_leaf) * scale
    cr = np.clip(rng.normal(0.05, 0.015, n_leaf), 0.005, 0.2)
    aov = rng.lognormal(4.3, 0.35, n_leaf)
    weekday = np.array([1.0, 0.97, 0.98, 1.0, 1.05, 1.12, 1.08])
    dow = np.array([weekday[d.weekday()] for d in dates])
    shock = rng.normal(1.0, 0.015, n_day)
    mult = np.outer(dow * shock, np.ones(n_leaf))  # days x leaves
    cr_mult = np.ones((n_day, n_leaf))
    in_window = np.array([d > end - timedelta(days=window) for d in dates])
    truth_seg: dict[str, str] = {}  # stays {} for causes about the whole metric
    detail = None
    kind = cause

    def pick_segment(default_depth: int = 1) -> dict[str, str]:
        if segment is not None:
            return segment
        chosen = rng.choice(names, size=default_depth, replace=False)
        return {str(d): str(rng.choice(dims[str(d)])) for d in chosen}

    def mask_of(seg: dict[str, str]) -> np.ndarray:
        m = np.ones(n_leaf, dtype=bool)
        for k, v in seg.items():
            m &= (leaves[k] == v).to_numpy()
        return m

    if cause == "segment_change":
        truth_seg = pick_segment()
        f = factor if factor is not None else float(rng.choice([0.5, 0.6, 1.6, 1.8]))
        mult[np.ix_(in_window, mask_of(truth_seg))] *= f
    elif cause == "rate_change":
        truth_seg = pick_segment()
        cr_mult[np.ix_(in_window, mask_of(truth_seg))] *= factor if factor is not None else 0.7
    elif cause == "mix_shift":
        dim = next(iter(segment)) if segment else str(rng.choice(names))
        value = segment[dim] if segment else str(rng.choice(dims[dim]))
        truth_seg = {dim: value}
        m = mask_of(truth_seg)
        aov[m] *= 1.8  # the segment that loses share is the high-value one
        f = factor if factor is not None else 0.5
        base_share = level[m].sum() / level.sum()
        boost = (1 - base_share * f) / (1 - base_share)
        mult[np.ix_(in_window, m)] *= f
        mult[np.ix_(in_window, ~m)] *= boost
    elif cause == "seasonality":
        dip = factor if factor is not None else 0.7
        year_ago = np.array(
            [end - timedelta(days=365 + window) < d <= end - timedelta(days=365) for d in dates]
        )
        mult[in_window | year_ago] *= dip
    elif cause == "broad_based":
        mult[in_window] *= factor if factor is not None else 0.85
    elif cause == "new_segment":
        dim = next(iter(segment)) if segment else str(rng.choice(names))
        value = segment[dim] if segment else f"NEW-{rng.integers(100, 999)}"
        truth_seg, kind = {dim: value}, "segment_change"
    elif cause in ("missing_data", "duplicates", "incomplete_recent_data"):
        kind, detail = "data_quality", cause
        if cause == "missing_data":
            truth_seg = pick_segment()
        elif cause == "incomplete_recent_data":
            tail = np.where(in_window)[0][-2:]
            mult[tail[0]] *= 0.7
            mult[tail[1]] *= 0.4

    sessions = rng.poisson(mult * level)
    orders = rng.binomial(sessions, np.clip(cr * cr_mult, 0, 1))
    revenue = np.round(orders * aov * rng.lognormal(0, 0.08, (n_day, n_leaf)), 2)
    frame = pd.DataFrame(
        {
            "date": np.repeat(np.array(dates, dtype=object), n_leaf),
            **{k: np.tile(leaves[k].to_numpy(), n_day) for k in names},
            "sessions": sessions.ravel(),
            "orders": orders.ravel(),
            "revenue": revenue.ravel(),
        }
    )
    if cause == "new_segment":
        # a new value of one dimension, with as much traffic as an average existing value
        others = [k for k in names if k != dim]
        sub = frame[frame["date"].isin([d for d, w in zip(dates, in_window, strict=True) if w])]
        sub = sub.groupby(["date", *others], as_index=False)[["sessions", "orders", "revenue"]].sum()
        size = (factor or 1.0) / len(dims[dim])
        for c in ("sessions", "orders"):
            sub[c] = rng.poisson(sub[c].to_numpy() * size)
        sub["revenue"] = np.round(sub["revenue"] * size * rng.lognormal(0, 0.05, len(sub)), 2)
        sub[dim] = value
        frame = pd.concat([frame, sub[frame.columns]], ignore_index=True)
    elif cause == "missing_data":
        lost_days = [d for d, w in zip(dates, in_window, strict=True) if w][-3:-1]
        m = frame["date"].isin(lost_days)
        for k, v in truth_seg.items():
            m &= frame[k] == v
        frame = frame[~m]
    elif cause == "duplicates":
        dup_day = [d for d, w in zip(dates, in_window, strict=True) if w][-2]
        frame = pd.concat([frame, frame[frame["date"] == dup_day]], ignore_index=True)
    truth = {
        "scenario": f"synth_{cause}_{seed}",
        "metric": _metric_for(cause),
        "time_column": "date",
        "dimensions": names,
        "window": f"{window}d",
        "end": end.isoformat(),
        "causes": [{"kind": kind, "segment": truth_seg, **({"detail": detail} if detail else {})}],
    }
    return frame.reset_index(drop=True), truth


# real-shaped data of any grain -------------------------------------------------------------------
SHAPES = ("events", "daily", "irregular", "weekly", "monthly", "quarterly", "yearly", "5-yearly")
PLANTS = ("none", "segment_change", "missing_period", "missing_partition", "relabel", "null_shift")
SHAPED_DIMS: dict[str, list[str]] = {
    "industry": ["manufacturing", "retail", "health", "finance", "construction", "education"],
    "region": ["north", "south", "east", "west"],
}
WEATHER = ["sunny", "rain", "snow", "fog"]
_SHAPE_END = {
    "events": date(2024, 3, 31), "daily": date(2024, 3, 31), "irregular": date(2024, 3, 31),
    "weekly": date(2024, 3, 25), "monthly": date(2024, 3, 31), "quarterly": date(2024, 3, 31),
    "yearly": date(2023, 1, 1), "5-yearly": date(2020, 1, 1),
}  # fmt: skip
_SHAPE_PERIODS = {
    "events": 400, "daily": 400, "irregular": 500, "weekly": 160, "monthly": 96, "quarterly": 40,
    "yearly": 93, "5-yearly": 15,
}  # fmt: skip
_SHAPE_WINDOW = {
    "events": "d", "daily": "d", "irregular": "d", "weekly": "w", "monthly": "mo", "quarterly": "q",
    "yearly": "y", "5-yearly": "y",
}  # fmt: skip


def _shape_dates(shape: str, end: date, n: int, rng: np.random.Generator) -> list[date]:
    """`n` period dates ending at `end`: month-end dates for months and quarters, Mondays for weeks."""
    if shape in ("events", "daily"):
        return [end - timedelta(days=n - 1 - i) for i in range(n)]
    if shape == "irregular":  # some days only, at random; the last day always
        days = [end - timedelta(days=n - 1 - i) for i in range(n)]
        keep = rng.random(n) < 0.4
        keep[-1] = True
        return [d for d, k in zip(days, keep, strict=True) if k]
    if shape == "weekly":
        monday = end - timedelta(days=end.weekday())
        return [monday - timedelta(weeks=n - 1 - i) for i in range(n)]
    if shape in ("monthly", "quarterly"):
        step = 1 if shape == "monthly" else 3
        ends = pd.date_range(end=pd.Timestamp(end), periods=n, freq=f"{step}ME")
        return [d.date() for d in ends]
    step = 1 if shape == "yearly" else 5
    return [date(end.year - step * (n - 1 - i), 1, 1) for i in range(n)]


def generate_shaped(
    shape: str = "monthly",
    *,
    plant: str = "none",
    seed: int = 0,
    periods: int | None = None,
    end: date | None = None,
    window: int | None = None,
    segment: dict[str, str] | None = None,
    factor: float | None = None,
    attribute: bool = True,
    null_share: float = 0.0,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A table shaped like real public data of one grain, with at most one planted problem.

    Shapes: `events` (several timestamped rows per day), `daily`, `irregular` (some days only),
    `weekly` (Mondays), `monthly` (month-end dates, across leap years), `quarterly` (quarter ends),
    `yearly` (an integer `year` column: 1931..2023) and `5-yearly` (integer years 1950..2020).
    Dimensions `industry` and `region`; with `attribute`, a per-period `weather` label (each value
    present in some periods only); `null_share` of rows have a null `region` throughout. Measures
    `value` and `units`. The window is the last `window` periods (days for the daily shapes).

    Plants: `none`; `segment_change` (the segment times `factor` in the window); `missing_period`
    (every row of one period inside the window dropped: give a window of 2+ periods);
    `missing_partition` (the segment's rows dropped in the window); `relabel` (industry=retail
    becomes "retail trade" from the window on); `null_shift` (30% of rows lose their region in the
    window). Returns (data, truth), truth as `generate` gives it plus `grain`.
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; choose from {', '.join(SHAPES)}")
    if plant not in PLANTS:
        raise ValueError(f"unknown plant {plant!r}; choose from {', '.join(PLANTS)}")
    rng = np.random.default_rng(seed)
    end = end or _SHAPE_END[shape]
    n = periods or _SHAPE_PERIODS[shape]
    daily_like = shape in ("events", "daily", "irregular")
    window = window or (7 if daily_like else 1)
    dates = _shape_dates(shape, end, n, rng)
    names = list(SHAPED_DIMS)
    leaves = pd.DataFrame(list(product(*SHAPED_DIMS.values())), columns=names)
    n_leaf, n_per = len(leaves), len(dates)
    level = rng.lognormal(5.0, 0.7, n_leaf)
    t = np.arange(n_per, dtype=float)
    trend = 1.0 + (0.004 if not daily_like else 0.0002) * t
    month = np.array([d.month for d in dates])
    season = 1.0 + (0.08 * np.sin(2 * np.pi * month / 12) if shape not in ("yearly", "5-yearly") else 0.0)
    weekday = np.array([1.0, 0.98, 0.99, 1.0, 1.03, 1.05, 1.02])[[d.weekday() for d in dates]]
    dow = weekday if daily_like else np.ones(n_per)
    mult = np.outer(trend * season * dow * rng.normal(1.0, 0.01, n_per), np.ones(n_leaf))
    value = mult * level * rng.normal(1.0, 0.01, (n_per, n_leaf))
    if daily_like:
        cutoff = end - timedelta(days=window)
        in_window = np.array([d > cutoff for d in dates])
    else:
        in_window = np.arange(n_per) >= n_per - window
    truth_causes: list[dict[str, Any]] = []
    seg = segment or {"industry": "health"}
    seg_mask = np.ones(n_leaf, dtype=bool)
    for k, v in seg.items():
        seg_mask &= (leaves[k] == v).to_numpy()
    if plant == "segment_change":
        value[np.ix_(in_window, seg_mask)] *= factor if factor is not None else 0.5
        truth_causes.append({"kind": "segment_change", "segment": seg})
    units = np.round(value / rng.lognormal(3.0, 0.2, n_leaf))
    frame = pd.DataFrame(
        {
            "date": np.repeat(np.array(dates, dtype=object), n_leaf),
            **{k: np.tile(leaves[k].to_numpy(), n_per).astype(object) for k in names},
            "value": np.round(value.ravel(), 2),
            "units": units.ravel(),
        }
    )
    window_dates = [d for d, w in zip(dates, in_window, strict=True) if w]
    if attribute:
        weather = dict(zip(dates, rng.choice(WEATHER, size=n_per, p=[0.5, 0.25, 0.15, 0.1]), strict=True))
        frame["weather"] = frame["date"].map(weather)
    if null_share:
        frame.loc[rng.random(len(frame)) < null_share, "region"] = None
    if plant == "missing_period":
        if len(window_dates) < 2:
            raise ValueError("missing_period needs a window of 2 or more periods (the window must hold rows)")
        lost = window_dates[len(window_dates) // 2]
        frame = frame[frame["date"] != lost]
        truth_causes.append({"kind": "data_quality", "segment": {}, "detail": "missing_data"})
    elif plant == "missing_partition":
        m = frame["date"].isin(window_dates)
        for k, v in seg.items():
            m &= frame[k] == v
        frame = frame[~m]
        truth_causes.append({"kind": "data_quality", "segment": seg, "detail": "missing_data"})
    elif plant == "relabel":
        m = frame["date"].isin(window_dates) & (frame["industry"] == "retail")
        frame.loc[m, "industry"] = "retail trade"
        truth_causes.append(
            {"kind": "data_quality", "segment": {"industry": "retail"}, "detail": "relabelled",
             "renamed_to": {"industry": "retail trade"}}
        )  # fmt: skip
    elif plant == "null_shift":
        m = frame["date"].isin(window_dates) & (rng.random(len(frame)) < 0.3)
        frame.loc[m, "region"] = None
        truth_causes.append({"kind": "data_quality", "segment": {"region": "null"}, "detail": "null_values"})
    if shape == "events":
        frame = _as_events(frame, rng)
    time_column = "date"
    if shape in ("yearly", "5-yearly"):
        frame = frame.rename(columns={"date": "year"})
        frame["year"] = frame["year"].map(lambda d: d.year).astype("int64")
        time_column = "year"
    suffix = _SHAPE_WINDOW[shape]
    length = window * (5 if shape == "5-yearly" else 1)
    truth = {
        "scenario": f"shaped_{shape}_{plant}_{seed}",
        "metric": "value",
        "time_column": time_column,
        "dimensions": names + (["weather"] if attribute else []),
        "window": f"{length}{suffix}",
        "end": end.isoformat() if time_column == "date" else str(end.year),
        "grain": shape,
        "causes": truth_causes or [{"kind": "no_change", "segment": {}}],
    }
    return frame.reset_index(drop=True), truth


def _as_events(frame: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Split each (day, leaf) row into 1-5 events at random times of that day, keeping the sums."""
    k = rng.integers(1, 6, len(frame))
    events = frame.loc[frame.index.repeat(k)].reset_index(drop=True)
    share = rng.dirichlet(np.ones(5), len(frame))
    parts = np.concatenate([s[:j] / s[:j].sum() for s, j in zip(share, k, strict=True)])
    events["value"] = np.round(events["value"].to_numpy() * parts, 4)
    events["units"] = events["units"].to_numpy() * parts
    seconds = rng.integers(0, 86400, len(events))
    events["date"] = pd.to_datetime(events["date"]) + pd.to_timedelta(seconds, unit="s")
    return events.sort_values("date").reset_index(drop=True)
