"""Counts are counts: a count of n events swings by about sqrt(n) from one window to the next
(Poisson), so a change within that noise is ordinary however large its percent: 6 -> 14 events,
or a segment that went from 0 to 2. Percent changes of small numbers are not evidence.

A metric counts when its measure is a count (`count(*)`, `count(col)`, `count_distinct(col)`) or
when both values are whole, non-negative numbers (a sum of small integers: deaths, cases, units).
"""

from __future__ import annotations

import math

from .spec import AnalysisSpec

COUNT_Z = 2.0  # a change of fewer than 2 sqrt(n) events is within a count's own noise


def counts(spec: AnalysisSpec, *values: float) -> bool:
    """Whether these values of the metric are counts of events."""
    if spec.is_ratio:
        return False
    measure = spec.computed.get(spec.numerator)
    if measure is not None and measure.kind != "sum":
        return True
    return bool(values) and all(math.isfinite(v) and v >= 0 and float(v).is_integer() for v in values)


def within_count_noise(spec: AnalysisSpec, baseline: float, current: float) -> bool:
    """A change of a count no larger than its own Poisson noise (COUNT_Z standard deviations)."""
    if not counts(spec, baseline, current):
        return False
    return abs(current - baseline) < COUNT_Z * math.sqrt(max(baseline, 0.0) + max(current, 0.0))
