"""Measure values that are not numbers the business made: nulls, negatives, NaN and infinities
appearing in the current window, and a series that started being reported (new coverage)."""

from __future__ import annotations

import pandas as pd

from ..spec import AnalysisSpec
from .issues import QualityIssue
from .periods import _periods, _unit


def find_new_coverage(
    by_dim: dict[str, pd.DataFrame], spec: AnalysisSpec, change: float
) -> list[QualityIssue]:
    """A value that had rows but no value (null or zero) in every period before the window, and
    values in it: the series started being reported, which adds to the total without anything
    having grown (a category null before a date, present after). Its whole current sum is the effect."""
    issues = []
    for dim, df in by_dim.items():
        before = df[df["date"] < spec.current.start]
        if before.empty:
            continue
        cur = df[df["date"].between(spec.current.start, spec.current.end)]
        blank = before.groupby(dim).agg(rows=("rows", "sum"), value=("value", lambda v: float(v.abs().sum())))
        periods = before.groupby(dim)["date"].nunique()
        base_n = len(_periods(spec.baseline, spec))
        for v, row in blank.iterrows():
            now = float(cur.loc[cur[dim] == v, "value"].sum())
            if row["value"] != 0 or row["rows"] == 0 or periods[v] < base_n or now == 0:
                continue
            if change and now / change < 0.1:
                continue
            issues.append(
                QualityIssue(
                    detail="new_coverage",
                    segment={dim: str(v)},
                    days=_periods(spec.current, spec),
                    effect=now,
                    evidence=(
                        f"{dim}={v} has rows but no {spec.numerator} in all {_unit(spec, int(periods[v]))} "
                        f"before the window and {now:,.1f} in it: it started being reported (new coverage, "
                        "not growth)"
                    ),
                )
            )
    return issues


def find_bad_values(profile: dict[str, dict[str, float]], spec: AnalysisSpec) -> list[QualityIssue]:
    """Nulls or negative values of a measure that appear in the current window.

    Nulls of the numerator carry an estimated effect: the extra nulls times the window's mean value
    per row (a null is a value the sum silently lost, never a 0)."""
    issues = []
    cur, base = profile["current"], profile["baseline"]
    for m in spec.measures:
        for what, detail in (("nulls", "null_values"), ("negatives", "negative_values")):
            n_cur, n_base = cur.get(f"{m}__{what}", 0), base.get(f"{m}__{what}", 0)
            rate_cur = n_cur / max(cur.get("rows", 0), 1)
            rate_base = n_base / max(base.get("rows", 0), 1)
            if n_cur and rate_cur > 2 * rate_base + 0.001:
                effect, note = 0.0, ""
                if what == "nulls" and m == spec.numerator:
                    extra = n_cur - rate_base * cur.get("rows", 0)
                    src = cur if cur.get(f"{m}__values", 0) else base
                    values, total = src.get(f"{m}__values", 0), src.get(f"{m}__sum", 0)
                    per_row = total / values if values else 0.0
                    effect = -extra * per_row
                    note = f"; about {-effect:,.0f} {m} unaccounted for (at {per_row:,.2f} per row)"
                issues.append(
                    QualityIssue(
                        detail=detail,
                        effect=effect,
                        evidence=f"{n_cur:.0f} {what} in {m} in the current window "
                        f"({n_base:.0f} before){note}{_non_finite_words(cur, base, m)}",
                        non_finite=_non_finite(cur, base, m) if what == "nulls" else 0,
                    )
                )
            elif what == "nulls" and _non_finite(cur, base, m):
                issues.append(
                    QualityIssue(
                        detail=detail,
                        evidence=_non_finite_words(cur, base, m)[2:],
                        non_finite=_non_finite(cur, base, m),
                    )
                )
    return issues


def _non_finite(cur: dict[str, float], base: dict[str, float], m: str) -> int:
    return int(cur.get(f"{m}__nonfinite", 0) + base.get(f"{m}__nonfinite", 0))


def _non_finite_words(cur: dict[str, float], base: dict[str, float], m: str) -> str:
    """NaN and infinite values are bad data, never a number: say how many were left out of the sums."""
    n_cur, n_base = cur.get(f"{m}__nonfinite", 0), base.get(f"{m}__nonfinite", 0)
    if not (n_cur or n_base):
        return ""
    return (
        f"; {n_cur + n_base:.0f} NaN or infinite values of {m} ({n_cur:.0f} in the current window, "
        f"{n_base:.0f} in the baseline) left out of the sums as missing"
    )
