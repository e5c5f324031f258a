"""Inside one segment: is its change spread over its children alike, or held by one child?"""

from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from .queries import BASE, CUR, whole
from .spec import AnalysisSpec


class ChildSplit(BaseModel):
    dimension: str
    top_value: str
    share_of_segment_change: float
    baseline_share: float
    dispersion: float


class DrillDown(BaseModel):
    kind: Literal["drill_down"] = "drill_down"
    metric: str
    segment: dict[str, str]
    segment_change: float
    segment_change_pct: float | None
    share_of_total: float
    children: list[ChildSplit] = Field(default_factory=list)
    uniform: bool
    concentrated_in: dict[str, str] = Field(default_factory=dict)


def _mask(cube: pd.DataFrame, segment: dict[str, str]) -> pd.Series:
    m = pd.Series(True, index=cube.index)
    for k, v in segment.items():
        m &= cube[k].astype(str) == str(v)
    return m


def drill_down(cube: pd.DataFrame, spec: AnalysisSpec, segment: dict[str, str]) -> DrillDown:
    """Inside a segment, is the change spread over its children alike, or held by one child?"""
    n = spec.numerator
    sub = cube[_mask(cube, segment)]
    seg_change = float(sub[CUR + n].sum() - sub[BASE + n].sum())
    tot = whole(cube, spec)
    total_change = float(tot[CUR + n] - tot[BASE + n])
    seg_base = float(sub[BASE + n].sum())
    children = []
    for dim in (d for d in spec.dimensions if d not in segment):
        g = sub.groupby(dim, observed=True)[[CUR + n, BASE + n]].sum()
        change = g[CUR + n] - g[BASE + n]
        if g.empty or not seg_change:
            continue
        top = change.abs().idxmax() if seg_change == 0 else (change * np.sign(seg_change)).idxmax()
        pct = change / g[BASE + n].abs().where(g[BASE + n] != 0)
        w = g[BASE + n].abs() / g[BASE + n].abs().sum()
        seg_pct = seg_change / abs(seg_base) if seg_base else np.nan
        disp = float((w * (pct - seg_pct).abs()).sum() / abs(seg_pct)) if seg_pct else np.inf
        children.append(
            ChildSplit(
                dimension=dim,
                top_value=str(top),
                share_of_segment_change=float(change[top] / seg_change),
                baseline_share=float(w[top]) if np.isfinite(w[top]) else 0.0,
                dispersion=disp if np.isfinite(disp) else 99.0,
            )
        )
    conc = [c for c in children if c.share_of_segment_change >= 0.8 and c.baseline_share <= 0.6]
    best = max(conc, key=lambda c: c.share_of_segment_change - c.baseline_share, default=None)
    return DrillDown(
        metric=spec.metric,
        segment=segment,
        segment_change=seg_change,
        segment_change_pct=seg_change / abs(seg_base) if seg_base else None,
        share_of_total=seg_change / total_change if total_change else 0.0,
        children=children,
        uniform=best is None,
        concentrated_in={**segment, best.dimension: best.top_value} if best else {},
    )
