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
