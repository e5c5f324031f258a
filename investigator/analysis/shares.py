"""A segment's share of a change, defined once: what the verdict claims, the segment table shows
and the host checks are all this number."""

from __future__ import annotations

import pandas as pd

from .drill import _mask
from .queries import BASE, CUR, grouped, whole
from .spec import AnalysisSpec


def ratio_of(n: float, d: float) -> float:
    return n / d if d else float("nan")


def _segment_sums(cube: pd.DataFrame, spec: AnalysisSpec, segment: dict[str, str]) -> pd.Series:
    """A segment's `cur_`/`base_` numbers: a one-dimension segment's own counts (`grouped`), else
    its leaves added up (for a distinct count, an upper bound when a value is in several leaves)."""
    cols = [p + m for m in spec.measures for p in (CUR, BASE)]
    if len(segment) == 1:
        ((dim, value),) = segment.items()
        g = grouped(cube, spec, dim, cols)
        g.index = g.index.astype(str)
        return g.loc[str(value)] if str(value) in g.index else pd.Series(0.0, index=cols)
    out: pd.Series = cube.loc[_mask(cube, segment), cols].sum()
    return out


def segment_share(cube: pd.DataFrame, spec: AnalysisSpec, segment: dict[str, str]) -> float | None:
    """The segment's share of the change: its own change for sums; for ratios, how much of the
    ratio's change goes away if the segment's rate had stayed at its baseline value."""
    n, d = spec.numerator, spec.denominator
    tot, seg = whole(cube, spec), _segment_sums(cube, spec, segment)
    if d is None:
        total = tot[CUR + n] - tot[BASE + n]
        return float((seg[CUR + n] - seg[BASE + n]) / total) if total else None
    n1, d1, n0, d0 = (tot[c] for c in (CUR + n, CUR + d, BASE + n, BASE + d))
    sn1, sd1, sn0, sd0 = (seg[c] for c in (CUR + n, CUR + d, BASE + n, BASE + d))
    change = ratio_of(n1, d1) - ratio_of(n0, d0)
    counterfactual = (
        ratio_of(n1 - sn1 + sd1 * ratio_of(sn0, sd0), d1) if sd0 else ratio_of(n1 - sn1, d1 - sd1)
    )
    return float((ratio_of(n1, d1) - counterfactual) / change) if change else None
