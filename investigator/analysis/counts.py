"""Counts are counts: a count of n events swings by about sqrt(n) from one window to the next
(Poisson), so a change within that noise is ordinary however large its percent: 6 -> 14 events,
or a segment that went from 0 to 2. Percent changes of small numbers are not evidence.

A metric counts when its measure is a count (`count(*)`, `count(col)`, `count_distinct(col)`) or
when every period's sum is a whole, non-negative number (deaths, cases, units sold). A sum of
whole currency units reads as a count too; its own noise is far larger than Poisson's, so the
rule only ever calls a change noise that is noise for it as well.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from .spec import AnalysisSpec

COUNT_Z = 2.0  # a change of fewer than 2 sqrt(n) events is within a count's own noise


def is_count(spec: AnalysisSpec, daily: pd.DataFrame) -> bool:
    """Whether the metric counts events: a count measure, or whole non-negative sums per period."""
    if spec.is_ratio:
        return False
    measure = spec.computed.get(spec.numerator)
    if measure is not None and measure.kind != "sum":
        return True
    values = daily[spec.numerator].dropna().to_numpy(dtype=float) if spec.numerator in daily else np.array([])
    return bool(len(values)) and bool(np.all((values >= 0) & (values == np.floor(values))))


def within_count_noise(baseline: float, current: float) -> bool:
    """A change of a count no larger than its own Poisson noise (COUNT_Z standard deviations)."""
    if not (math.isfinite(baseline) and math.isfinite(current)):
        return False
    return abs(current - baseline) < COUNT_Z * math.sqrt(max(baseline, 0.0) + max(current, 0.0))
