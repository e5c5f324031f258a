"""Mix vs rate: why a ratio metric (orders/sessions, revenue/orders) moved.

With segment weights w = den_i / den and rates r = num_i / den_i, the ratio is R = sum(w * r) and
its change splits exactly into
    mix_i  = (w1_i - w0_i) * (rbar_i - Rbar)   the denominator's share moved between segments
    rate_i = (r1_i - r0_i) * wbar_i            the ratio moved inside the segment
where bars are averages of the two periods. Centering mix on Rbar keeps the total unchanged (the
weight changes sum to 0) and makes a segment's mix effect say whether losing share hurt the ratio.

A distinct count as the denominator (revenue per distinct user) counts each segment's users on
their own, so a user in two segments is in both and the weights need not sum to 1. R = sum(w * r)
still holds (the numerator adds up), and what centering leaves over is
    overlap = Rbar * (sum(w1) - sum(w0))   users counted in more (or fewer) segments than before
which `mix_rate` returns in `attrs["overlap"]` (0 when the denominator adds up): mix, rate and
overlap add up to the change exactly.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from .queries import BASE, CUR, grouped, whole
from .shares import segment_share
from .spec import AnalysisSpec


def mix_rate(cube: pd.DataFrame, spec: AnalysisSpec, dim: str) -> pd.DataFrame:
    """Per-value mix and rate effects of one dimension; rows sum to the ratio's total change."""
    if spec.denominator is None:
        raise ValueError(f"{spec.metric!r} is not a ratio metric: mix/rate needs a denominator")
    n, d = spec.numerator, spec.denominator
    g = grouped(cube, spec, dim, [CUR + n, BASE + n, CUR + d, BASE + d])
    tot = whole(cube, spec)
    den0, den1 = tot[BASE + d], tot[CUR + d]
    w0 = g[BASE + d] / den0 if den0 else g[BASE + d] * 0
    w1 = g[CUR + d] / den1 if den1 else g[CUR + d] * 0
    r0 = (g[BASE + n] / g[BASE + d]).where(g[BASE + d] != 0)
    r1 = (g[CUR + n] / g[CUR + d]).where(g[CUR + d] != 0)
    # a segment absent in one period has no rate there: use the other period's rate
    r0, r1 = r0.fillna(r1).fillna(0.0), r1.fillna(r0).fillna(0.0)
    big_r0 = tot[BASE + n] / den0 if den0 else 0.0
    big_r1 = tot[CUR + n] / den1 if den1 else 0.0
    rbar = (r0 + r1) / 2
    out = pd.DataFrame(
        {
            "baseline_weight": w0,
            "current_weight": w1,
            "baseline_rate": r0,
            "current_rate": r1,
            "mix": (w1 - w0) * (rbar - (big_r0 + big_r1) / 2),
            "rate": (r1 - r0) * (w0 + w1) / 2,
        }
    )
    out["effect"] = out["mix"] + out["rate"]
    overlap = float((big_r0 + big_r1) / 2 * (w1.sum() - w0.sum())) if not spec.additive else 0.0
    out = out.reset_index()
    out[dim] = out[dim].astype(str)
    out = out.reindex(out["effect"].abs().sort_values(ascending=False).index).reset_index(drop=True)
    out.attrs["overlap"] = overlap
    return out


class MixPart(BaseModel):
    """One value's part of a dimension's mix effect: the parts of all values add up to it."""

    segment: str
    mix: float
    weight_change: float  # its share of the denominator, current minus baseline


class DimensionSplit(BaseModel):
    """How one dimension splits the ratio's change into mix and rate."""

    dimension: str
    mix: float
    rate: float
    top_mix_segment: str
    top_mix: float
    top_mix_weight_change: float
    top_rate_segment: str
    top_rate: float
    rate_concentration: float  # share of the rate effect carried by the top segment
    mix_concentration: float
    overlap: float = Field(
        0.0,
        description="a distinct-count denominator: the change from users counted in more (or fewer) "
        "segments than before; mix + rate + overlap is the change (0 when the denominator adds up)",
    )
    parts: list[MixPart] = Field(default_factory=list, description="the largest mix parts, by |mix|")


class RatioDecomposition(BaseModel):
    """Mix/rate split of a ratio's change for every dimension, and the dimension that explains it."""

    kind: Literal["ratio_decomposition"] = "ratio_decomposition"
    metric: str
    baseline: float
    current: float
    change: float
    dimensions: list[DimensionSplit]
    driver: Literal["mix", "rate"]
    dimension: str
    segment: str
    driver_share: float  # fraction of the change carried by the driver in that dimension


PARTS = 5  # mix parts kept per dimension


def _split(table: pd.DataFrame, dim: str) -> DimensionSplit:
    tm = table.reindex(table["mix"].abs().sort_values(ascending=False).index).iloc[0]
    tr = table.reindex(table["rate"].abs().sort_values(ascending=False).index).iloc[0]
    mix_abs, rate_abs = table["mix"].abs().sum(), table["rate"].abs().sum()
    return DimensionSplit(
        dimension=dim,
        mix=float(table["mix"].sum()),
        rate=float(table["rate"].sum()),
        top_mix_segment=str(tm[dim]),
        top_mix=float(tm["mix"]),
        top_mix_weight_change=float(tm["current_weight"] - tm["baseline_weight"]),
        top_rate_segment=str(tr[dim]),
        top_rate=float(tr["rate"]),
        rate_concentration=float(abs(tr["rate"]) / rate_abs) if rate_abs else 0.0,
        mix_concentration=float(abs(tm["mix"]) / mix_abs) if mix_abs else 0.0,
        overlap=float(table.attrs.get("overlap", 0.0)),
        parts=[
            MixPart(
                segment=str(r[dim]),
                mix=float(r["mix"]),
                weight_change=float(r["current_weight"] - r["baseline_weight"]),
            )
            for _, r in table.reindex(table["mix"].abs().sort_values(ascending=False).index)
            .head(PARTS)
            .iterrows()
        ],
    )


def decompose_ratio(cube: pd.DataFrame, spec: AnalysisSpec) -> RatioDecomposition:
    """Split the change per dimension and name the driver (mix or rate), dimension and segment.

    The mix effect of a dimension is the part of the change that re-weighting its values explains;
    the dimension with the largest mix effect relative to the change is the mix candidate. A rate
    change is named in the dimension where one segment carries most of the rate effect.
    """
    n, d = spec.numerator, spec.denominator or ""
    tot = whole(cube, spec)
    r0 = tot[BASE + n] / tot[BASE + d] if tot[BASE + d] else float("nan")
    r1 = tot[CUR + n] / tot[CUR + d] if tot[CUR + d] else float("nan")
    change = float(r1 - r0)
    splits = [_split(mix_rate(cube, spec, dim), dim) for dim in spec.dimensions]
    best_mix = max(splits, key=lambda s: s.mix * np.sign(change) if change else abs(s.mix))
    best_rate = max(splits, key=lambda s: abs(s.top_rate) * s.rate_concentration)
    mix_share = best_mix.mix / change if change else 0.0
    if mix_share >= 0.5:
        driver, dim, seg, share = "mix", best_mix.dimension, best_mix.top_mix_segment, mix_share
    else:
        driver, dim, seg = "rate", best_rate.dimension, best_rate.top_rate_segment
        share = (segment_share(cube, spec, {dim: seg}) or 0.0) if change else 0.0
    return RatioDecomposition(
        metric=spec.metric,
        baseline=float(r0),
        current=float(r1),
        change=change,
        dimensions=splits,
        driver=driver,
        dimension=dim,
        segment=seg,
        driver_share=float(share),
    )
