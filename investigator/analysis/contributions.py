"""Who moved: each segment's change and its share of the total change, for additive measures."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd
from pydantic import BaseModel

from .queries import BASE, CUR, grouped, whole
from .shares import segment_share
from .spec import AnalysisSpec


def contributions(
    cube: pd.DataFrame, spec: AnalysisSpec, dims: Sequence[str], measure: str | None = None
) -> pd.DataFrame:
    """Change of `measure` (default: the numerator) by the given dimensions, biggest mover first.

    `share` is the segment's fraction of the total change (shares sum to 1 for a sum; a distinct
    count's segments overlap, so theirs need not); `baseline_share` its fraction of the baseline
    total, so a segment with share >> baseline_share moved unusually.
    """
    m = measure or spec.numerator
    cols = [CUR + m, BASE + m]
    if len(dims) == 1:  # a distinct count: each value's own count
        g = grouped(cube, spec, dims[0], cols).reset_index()
    else:
        g = cube.groupby(list(dims), observed=True)[cols].sum().reset_index()
    g = g.rename(columns={CUR + m: "current", BASE + m: "baseline"})
    g["change"] = g["current"] - g["baseline"]
    g["change_pct"] = np.where(g["baseline"] != 0, g["change"] / g["baseline"].abs(), np.nan)
    tot = whole(cube, spec)
    total_change = float(tot[CUR + m] - tot[BASE + m])
    total_base = float(tot[BASE + m])
    g["share"] = g["change"] / total_change if total_change else 0.0
    g["baseline_share"] = g["baseline"] / total_base if total_base else 0.0
    return g.reindex(g["change"].abs().sort_values(ascending=False).index).reset_index(drop=True)


def top_contributions(
    cube: pd.DataFrame, spec: AnalysisSpec, max_depth: int = 2, n: int = 10
) -> pd.DataFrame:
    """The `n` segments with the largest absolute change over all dimension combinations."""
    frames = []
    for depth in range(1, max_depth + 1):
        for dims in combinations(spec.dimensions, depth):
            c = contributions(cube, spec, dims)
            c.insert(0, "segment", [dict(zip(dims, v, strict=True)) for v in c[list(dims)].values])
            frames.append(c.drop(columns=list(dims)).head(n))
    out = pd.concat(frames, ignore_index=True)
    return out.reindex(out["change"].abs().sort_values(ascending=False).index).head(n)


class SegmentChange(BaseModel):
    """One row of the ranked table every analyst computes first: a segment's value in the window
    and the baseline, its change, and its share of the net change (past 100% when others offset)."""

    segment: dict[str, str]
    current: float
    baseline: float
    change: float
    share: float | None


def segment_table(cube: pd.DataFrame, spec: AnalysisSpec, n: int = 10) -> list[SegmentChange]:
    """The `n` single-dimension segments that moved most. For a ratio metric the values are the
    segment's ratio, and the share is how much of the ratio's change goes if the segment's ratio had
    held (so mix effects are not counted twice). A distinct count's segments are each counted on
    their own (a user in two segments is in both) and their share is their own change over the
    total's: shares need not add up to 100%."""

    rows: list[SegmentChange] = []
    num, den = spec.numerator, spec.denominator
    measures = [num] + ([den] if den else [])
    for dim in spec.dimensions:
        cols = [CUR + m for m in measures] + [BASE + m for m in measures]
        g = grouped(cube, spec, dim, cols)
        tot = whole(cube, spec)
        total = float(tot[CUR + num] - tot[BASE + num])
        for value, r in g.iterrows():
            segment = {dim: "null" if pd.isna(value) else str(value)}
            if den is None:
                cur, base = float(r[CUR + num]), float(r[BASE + num])
                share = (cur - base) / total if total else None
            else:
                cur = float(r[CUR + num] / r[CUR + den]) if r[CUR + den] else float("nan")
                base = float(r[BASE + num] / r[BASE + den]) if r[BASE + den] else float("nan")
                share = segment_share(cube, spec, segment) if not pd.isna(value) else None
            rows.append(
                SegmentChange(segment=segment, current=cur, baseline=base, change=cur - base, share=share)
            )
    key = (lambda s: -abs(s.share or 0.0)) if den else (lambda s: -abs(s.change))
    return sorted((r for r in rows if np.isfinite(r.change)), key=key)[:n]
