"""Data-quality checks: is the movement an artefact of the data rather than the business?

Each issue carries its estimated effect on the change, so the caller can tell a data problem that
explains the movement from one that is merely present.
"""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from . import queries
from .causes import QualityDetail
from .spec import AnalysisSpec, Window


class QualityIssue(BaseModel):
    detail: QualityDetail
    segment: dict[str, str] = Field(default_factory=dict)
    days: list[date] = Field(default_factory=list)
    effect: float = 0.0  # estimated effect on the metric's change (numerator units)
    share: float = 0.0  # effect / total change of the numerator
    evidence: str


class QualityReport(BaseModel):
    kind: Literal["quality"] = "quality"
    metric: str
    numerator_change: float
    issues: list[QualityIssue]

    @property
    def material(self) -> list[QualityIssue]:
        """Issues that explain a meaningful part of the change."""
        return [i for i in self.issues if abs(i.share) >= 0.25]


def _days(w: Window) -> list[date]:
    return [d.date() for d in pd.date_range(w.start, w.end, freq="D")]


def _expected_by_weekday(series: pd.Series, day: date, weeks: int = 4) -> float:
    """Mean of the same weekday over the previous weeks that have data."""
    prior = [day - pd.Timedelta(days=7 * k) for k in range(1, weeks + 1)]
    vals = [series.get(d.date() if hasattr(d, "date") else d) for d in prior]
    vals = [v for v in vals if v is not None and np.isfinite(v) and v > 0]
    return float(np.mean(vals)) if vals else float("nan")


def find_duplicates(profile: pd.DataFrame, spec: AnalysisSpec) -> list[QualityIssue]:
    """Days whose share of exact duplicate rows stands out from the usual level."""
    p = profile.copy()
    p["dup_rate"] = 1 - p["distinct_rows"] / p["rows"].where(p["rows"] > 0)
    usual = float(p["dup_rate"].median())
    spread = float(1.4826 * (p["dup_rate"] - usual).abs().median())
    flagged = p[p["dup_rate"] > usual + max(0.05, 5 * spread)]
    issues = []
    for w_name, w, sign in (("current", spec.current, 1), ("baseline", spec.baseline, -1)):
        f = flagged[(flagged["date"] >= w.start) & (flagged["date"] <= w.end)]
        if f.empty:
            continue
        excess = float((f["value"] - f["distinct_value"]).sum())
        issues.append(
            QualityIssue(
                detail="duplicates",
                days=list(f["date"]),
                effect=sign * excess,
                evidence=(
                    f"{len(f)} day(s) in the {w_name} window have {f['dup_rate'].max():.0%} "
                    f"duplicated rows (usual {usual:.0%}), adding {excess:,.0f} {spec.numerator}"
                ),
            )
        )
    return issues


def find_missing(
    by_dim: dict[str, pd.DataFrame], daily: pd.DataFrame, spec: AnalysisSpec
) -> list[QualityIssue]:
    """Whole days, or a dimension value's partitions, absent in the current window."""
    issues = []
    present = set(daily.loc[daily["rows"] > 0, "date"])
    cur_days = _days(spec.current)
    gone = [d for d in cur_days if d not in present]
    if gone:
        typical = float(daily.loc[daily["date"].isin(_days(spec.baseline)), spec.numerator].mean())
        issues.append(
            QualityIssue(
                detail="missing_data",
                days=gone,
                effect=-typical * len(gone),
                evidence=f"no rows at all on {len(gone)} day(s) of the current window",
            )
        )
    for dim, df in by_dim.items():
        base = df[df["date"].isin(_days(spec.baseline))]
        cur = df[df["date"].isin(cur_days) & (df["rows"] > 0)]
        base_days = base.groupby(dim)["date"].nunique()
        daily_value = base.groupby(dim)["value"].sum() / base_days.clip(lower=1)
        found = []
        for value in base_days.index[base_days >= spec.baseline.days]:
            # the value was there every baseline day but is missing on days the data has
            have = set(cur.loc[cur[dim] == value, "date"])
            lost = [d for d in cur_days if d in present and d not in have]
            if lost:
                found.append((value, lost, -float(daily_value[value]) * len(lost)))
        for value, lost, effect in sorted(found, key=lambda f: f[2])[:3]:
            issues.append(
                QualityIssue(
                    detail="missing_data",
                    segment={dim: str(value)},
                    days=lost,
                    effect=effect,
                    evidence=(
                        f"{dim}={value} has no rows on {len(lost)} of {len(cur_days)} current days "
                        f"(present on all {spec.baseline.days} baseline days); about "
                        f"{-effect:,.0f} {spec.numerator} missing"
                    ),
                )
            )
    return _keep_finest(issues)


def _keep_finest(issues: list[QualityIssue]) -> list[QualityIssue]:
    """A missing partition shows in one dimension; other dimensions only echo it as lower totals,
    so keep segment issues of the dimension with the largest missing effect."""
    seg = [i for i in issues if i.segment]
    if not seg:
        return issues
    best_dim = next(iter(max(seg, key=lambda i: abs(i.effect)).segment))
    return [i for i in issues if not i.segment or best_dim in i.segment]


def find_incomplete_recent(
    by_dim: dict[str, pd.DataFrame], daily: pd.DataFrame, spec: AnalysisSpec
) -> list[QualityIssue]:
    """The last days of the window low across every segment alike, as when loads are late."""
    series = daily.set_index("date")[spec.numerator]
    cur_days = [d for d in _days(spec.current) if d in series.index]
    if len(cur_days) < 3:
        return []
    ratio = pd.Series({d: series[d] / _expected_by_weekday(series, d) for d in cur_days})
    head = float(ratio.iloc[:-3].median()) if len(ratio) > 3 else 1.0
    tail: list[date] = []
    for d in reversed(cur_days):  # walk back from the end while days are clearly short
        if ratio[d] < 0.85 * head:
            tail.insert(0, d)
        else:
            break
    if not tail or len(tail) > max(3, len(cur_days) // 2):
        return []
    # alike across segments: every value of every dimension is short by a similar factor
    spreads = []
    for dim, df in by_dim.items():
        s = df[df["date"].isin(tail)].groupby(dim)["value"].sum()
        exp = (
            sum(
                df[df["date"] == (d - pd.Timedelta(days=7 * k))].groupby(dim)["value"].sum()
                for d in tail
                for k in range(1, 5)
            )
            / 4
        )
        r = (s / exp.reindex(s.index)).dropna()
        if len(r) > 1:
            spreads.append(float(r.std() / max(r.mean(), 1e-9)))
    if spreads and max(spreads) > 0.35:
        return []
    shortfall = float(sum(_expected_by_weekday(series, d) * head - series[d] for d in tail))
    return [
        QualityIssue(
            detail="incomplete_recent_data",
            days=tail,
            effect=-shortfall,
            evidence=(
                f"the last {len(tail)} day(s) are at {ratio[tail].mean():.0%} of their usual level "
                f"(earlier window days {head:.0%}), alike across all segments; about "
                f"{shortfall:,.0f} {spec.numerator} not yet loaded"
            ),
        )
    ]


def find_bad_values(profile: dict[str, dict[str, int]], spec: AnalysisSpec) -> list[QualityIssue]:
    """Nulls or negative values of a measure that appear in the current window."""
    issues = []
    cur, base = profile["current"], profile["baseline"]
    for m in spec.measures:
        for what, detail in (("nulls", "null_values"), ("negatives", "negative_values")):
            n_cur, n_base = cur.get(f"{m}__{what}", 0), base.get(f"{m}__{what}", 0)
            rate_cur = n_cur / max(cur.get("rows", 0), 1)
            rate_base = n_base / max(base.get("rows", 0), 1)
            if n_cur and rate_cur > 2 * rate_base + 0.001:
                issues.append(
                    QualityIssue(
                        detail=detail,
                        evidence=f"{n_cur} {what} in {m} in the current window ({n_base} before)",
                    )
                )
    return issues


def duplicate_suspects(daily: pd.DataFrame, spec: AnalysisSpec, references: int = 4) -> list[date]:
    """Days of either window with more rows than usual, plus a few ordinary days to compare with.

    Duplicated rows always raise a day's row count, so only those days need the (costly) distinct.
    """
    rows = daily.set_index("date")["rows"].astype(float)
    usual = float(rows.median())
    spread = float(1.4826 * (rows - usual).abs().median())
    windows = set(_days(spec.current)) | set(_days(spec.baseline))
    suspects = [d for d in rows.index if d in windows and rows[d] > usual + max(3 * spread, 0.02 * usual)]
    if not suspects:
        return []
    ordinary = [d for d in rows.index if d < spec.baseline.start and abs(rows[d] - usual) <= spread]
    return suspects + ordinary[-max(references, len(suspects) + 1) :]


def quality_checks(table: Any, spec: AnalysisSpec, daily: pd.DataFrame | None = None) -> QualityReport:
    """Run every check in the engine and estimate each issue's share of the change."""
    daily = daily if daily is not None else queries.daily_totals(table, spec)
    # per-segment checks look at the two windows and the four weeks before the current one
    since = min(spec.baseline.start, spec.current.start - pd.Timedelta(days=35).to_pytimedelta())
    recent = table.filter(table[spec.time_column] >= since)
    by_dim = {dim: queries.daily_by_dimension(recent, spec, dim) for dim in spec.dimensions}
    suspects = duplicate_suspects(daily, spec)
    issues = (
        (find_duplicates(queries.duplicate_profile(table, spec, suspects), spec) if suspects else [])
        + find_missing(by_dim, daily, spec)
        + find_incomplete_recent(by_dim, daily, spec)
        + find_bad_values(queries.value_profile(table, spec), spec)
    )

    def total(w: Window) -> float:
        return float(daily.loc[daily["date"].between(w.start, w.end), spec.numerator].sum())

    change = total(spec.current) - total(spec.baseline)
    for i in issues:
        i.share = i.effect / change if change else 0.0
    issues.sort(key=lambda i: -abs(i.share))
    return QualityReport(metric=spec.metric, numerator_change=change, issues=issues)
