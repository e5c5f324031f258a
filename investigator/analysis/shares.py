"""A segment's share of a change, defined once: what the verdict claims, the segment table shows
and the host checks are all this number."""

from __future__ import annotations

import pandas as pd

from .drill import _mask
from .queries import BASE, CUR
from .spec import AnalysisSpec


def ratio_of(n: float, d: float) -> float:
    return n / d if d else float("nan")


def segment_share(cube: pd.DataFrame, spec: AnalysisSpec, segment: dict[str, str]) -> float | None:
    """The segment's share of the change: its own change for sums; for ratios, how much of the
    ratio's change goes away if the segment's rate had stayed at its baseline value."""
    m = _mask(cube, segment)
    n, d = spec.numerator, spec.denominator
    if d is None:
        total = cube[CUR + n].sum() - cube[BASE + n].sum()
        return float((cube.loc[m, CUR + n].sum() - cube.loc[m, BASE + n].sum()) / total) if total else None
    n1, d1, n0, d0 = (cube[c].sum() for c in (CUR + n, CUR + d, BASE + n, BASE + d))
    sn1, sd1, sn0, sd0 = (cube.loc[m, c].sum() for c in (CUR + n, CUR + d, BASE + n, BASE + d))
    change = ratio_of(n1, d1) - ratio_of(n0, d0)
    counterfactual = (
        ratio_of(n1 - sn1 + sd1 * ratio_of(sn0, sd0), d1) if sd0 else ratio_of(n1 - sn1, d1 - sd1)
    )
    return float((ratio_of(n1, d1) - counterfactual) / change) if change else None
