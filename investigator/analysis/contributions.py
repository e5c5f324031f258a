"""Who moved: each segment's change and its share of the total change, for additive measures."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

import numpy as np
import pandas as pd

from .queries import BASE, CUR
from .spec import AnalysisSpec


def contributions(
    cube: pd.DataFrame, spec: AnalysisSpec, dims: Sequence[str], measure: str | None = None
) -> pd.DataFrame:
    """Change of `measure` (default: the numerator) by the given dimensions, biggest mover first.

    `share` is the segment's fraction of the total change (shares sum to 1); `baseline_share` its
    fraction of the baseline total, so a segment with share >> baseline_share moved unusually.
    """
    m = measure or spec.numerator
    g = cube.groupby(list(dims), observed=True)[[CUR + m, BASE + m]].sum().reset_index()
    g = g.rename(columns={CUR + m: "current", BASE + m: "baseline"})
    g["change"] = g["current"] - g["baseline"]
    g["change_pct"] = np.where(g["baseline"] != 0, g["change"] / g["baseline"].abs(), np.nan)
    total_change = float(g["change"].sum())
    total_base = float(g["baseline"].sum())
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
