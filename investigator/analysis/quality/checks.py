"""Every data-quality check run on one table, each issue's share of the change estimated (in the
ratio's own units for a ratio)."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from .. import queries
from ..spec import AnalysisSpec, Window
from ..table import Table
from .duplicates import duplicate_suspects, find_duplicates
from .issues import QualityIssue, QualityReport
from .labels import find_null_dimensions, find_relabelled
from .missing import find_incomplete_recent, find_missing
from .periods import lookback_start
from .values import find_bad_values, find_new_coverage

if TYPE_CHECKING:
    from ..history import DimensionHistory


def _recent_by_dimension(
    table: Table, spec: AnalysisSpec, since: date, history: DimensionHistory | None
) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """Per dimension, its values' sums per period from `since` on, and the labels of its nulls
    (chosen on the whole data, as the cube's are): cut from `history` when it has whole periods
    from there, else grouped by the engine."""
    if history is not None and spec.periods.start(since) == since:
        return history.since(since), history.labels
    recent = table.filter(table[spec.time_column] >= since)
    labels = queries.null_labels(table, spec.dimensions)  # as the cube labels them: one name per value
    return {dim: queries.daily_by_dimension(recent, spec, dim, labels) for dim in spec.dimensions}, labels


def _change(daily: pd.DataFrame, spec: AnalysisSpec) -> float:
    """The numerator's change between the windows."""

    def total(w: Window) -> float:
        return float(daily.loc[daily["date"].between(w.start, w.end), spec.numerator].sum())

    return total(spec.current) - spec.scaled(total(spec.baseline))


def _ratio_of(table: Table, spec: AnalysisSpec, w: Window, segment: dict[str, str]) -> float:
    """The ratio over a window, within a segment ({}: all of it); NaN when it has no denominator."""
    t = queries.measured(queries.leaves(table), spec)
    cond = queries._in(t, spec, w.start, w.end)
    for k, v in segment.items():
        cond &= t[k].cast("string") == v
    agg = {m: queries.measure(t, spec, m) for m in spec.measures}
    row = t.filter(cond).aggregate(**agg).to_pandas().iloc[0]
    n, d = (float(row[m]) if pd.notna(row[m]) else 0.0 for m in spec.measures)
    return n / d if d else float("nan")


def _in_ratio_units(
    issues: list[QualityIssue], table: Table, daily: pd.DataFrame, spec: AnalysisSpec
) -> float:
    """Restate each issue's effect in the ratio's own units and return the ratio's change. A data
    problem added `e` to the numerator (negative when rows are missing) at the rate of the rows it
    touched (the segment's baseline rate, else the window's own); without it the ratio would
    be (N - e) / (D - e / rate). Missing rows of a below-average segment raise the ratio, and
    nulls in the numerator lower it. Amounts are then in the metric's units, shares of its change."""
    d = spec.denominator
    assert d is not None

    def sums(w: Window) -> tuple[float, float]:
        rows = daily[daily["date"].between(w.start, w.end)]
        return float(rows[spec.numerator].sum()), float(rows[d].sum())

    (n1, d1), (n0, d0) = sums(spec.current), sums(spec.baseline)
    if not d1 or not d0:
        return 0.0
    whole = n0 / d0
    for i in issues:
        if not i.effect:
            continue
        if i.detail == "null_values":  # the numerator lost values, the denominator kept its rows
            i.effect = n1 / d1 - (n1 - i.effect) / d1
            continue
        # a segment's rows at its own rate; whole periods at the window's own rate, which leaves
        # the ratio where it is: a missing day lowers the numerator and the denominator alike
        rate = _ratio_of(table, spec, spec.baseline, i.segment) if i.segment else n1 / d1
        rate = rate if np.isfinite(rate) and rate else whole
        without = (n1 - i.effect) / (d1 - i.effect / rate) if d1 - i.effect / rate else float("nan")
        i.effect = n1 / d1 - without if np.isfinite(without) else 0.0
        i.evidence += f"; in {spec.metric}: {i.effect:+.4g}"
    return n1 / d1 - n0 / d0


def quality_checks(
    table: Table,
    spec: AnalysisSpec,
    daily: pd.DataFrame | None = None,
    history: DimensionHistory | None = None,
) -> QualityReport:
    """Run every check in the engine and estimate each issue's share of the change; `history`
    (`dimension_history` of the same table) saves grouping the data by each dimension again.

    A share is capped to [-1, 1]: an issue cannot explain more than the whole change.
    """
    daily = daily if daily is not None else queries.daily_totals(table, spec)
    since = lookback_start(spec)
    by_dim, labels = _recent_by_dimension(table, spec, since, history)
    suspects = duplicate_suspects(daily, spec)
    relabelled = find_relabelled(by_dim, daily, spec, since)
    skip: dict[str, set[str]] = {}
    for r in relabelled:
        for k, v in r.segment.items():
            skip.setdefault(k, set()).add(v)
    change = _change(daily, spec)
    issues = (
        (find_duplicates(queries.duplicate_profile(table, spec, suspects), spec) if suspects else [])
        + find_missing(by_dim, daily, spec, since, skip)
        + relabelled
        + find_null_dimensions(by_dim, spec, labels)
        + find_incomplete_recent(by_dim, daily, spec)
        + find_new_coverage(by_dim, spec, change)
        + find_bad_values(queries.value_profile(table, spec), spec)
    )

    if spec.is_ratio:
        change = _in_ratio_units(issues, table, daily, spec)
    for i in issues:
        i.share = float(np.clip(i.effect / change, -1.0, 1.0)) if change else 0.0
    issues.sort(key=lambda i: -abs(i.share))
    return QualityReport(metric=spec.metric, numerator_change=change, issues=issues)
