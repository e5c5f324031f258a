"""What a period cube holds beyond its leaves: for a metric with a distinct count, the engine's own
counts of the whole data and of each dimension's values over the window and the baseline (its
`attrs["rollups"]`, written by `queries.distinct_cube`). Every analysis that reads a segment or the
total off the cube reads it here (`grouped`, `whole`, `rest`), so that a distinct count is never
its leaves added up; for sums and counts these are the leaves added up, as before.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from .distinct import BASE, CUR, ONLY, WHOLE
from .spec import AnalysisSpec

ROLLUPS = "rollups"  # the cube's `attrs` key


def fingerprint(cube: pd.DataFrame, spec: AnalysisSpec) -> tuple[int, float]:
    """What ties rollups to the cube they were counted with: a slice of it has other leaves."""
    return len(cube), round(float(cube[CUR + spec.numerator].sum()), 6)


def _rollups(cube: pd.DataFrame, spec: AnalysisSpec) -> dict[str, Any] | None:
    got = cube.attrs.get(ROLLUPS)
    if not got or got.get("of") != fingerprint(cube, spec):
        return None
    return dict(got)


def grouped(cube: pd.DataFrame, spec: AnalysisSpec, dim: str, cols: list[str] | None = None) -> pd.DataFrame:
    """The cube's `cur_`/`base_` columns per value of `dim` (the index): the engine's own counts of
    each value when the metric has a distinct count, else the leaves added up."""
    cols = cols or [p + m for m in spec.measures for p in (CUR, BASE)]
    rollups = _rollups(cube, spec) if not spec.additive else None
    if rollups is not None and dim in rollups:
        out: pd.DataFrame = rollups[dim][cols]
        return out
    return cube.groupby(dim, observed=True, dropna=False)[cols].sum()


def rest(cube: pd.DataFrame, spec: AnalysisSpec, dim: str) -> pd.DataFrame:
    """Per value of `dim` (the index), the rest of the data's `cur_`/`base_` numbers: the total less
    the value's, and for a distinct count the total less the values seen in that value alone (a
    user on both devices is in the rest of each)."""
    cols = [p + m for m in spec.measures for p in (CUR, BASE)]
    g = grouped(cube, spec, dim, None)
    tot = whole(cube, spec)
    out = pd.DataFrame({c: tot[c] - g[c] for c in cols}, index=g.index)
    rollups = _rollups(cube, spec) if spec.windowed else None
    if rollups is not None and dim in rollups:
        for c in [c for c in cols if c.split("_", 1)[1] in spec.windowed]:
            out[c] = tot[c] - rollups[dim][ONLY + c]
    return out


def whole(cube: pd.DataFrame, spec: AnalysisSpec) -> pd.Series:
    """The cube's `cur_`/`base_` totals: the engine's count over the whole data for a distinct
    count (users in several segments once), else the leaves added up."""
    cols = [p + m for m in spec.measures for p in (CUR, BASE)]
    rollups = _rollups(cube, spec) if not spec.additive else None
    if rollups is not None:
        out: pd.Series = rollups[WHOLE][cols].iloc[0]
        return out
    return cube[cols].sum()
