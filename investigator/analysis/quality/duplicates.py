"""Copied rows: periods whose share of exact duplicate rows stands out, found in the few periods
whose row count says they may hold copies (a distinct over every column is the costliest query)."""

from __future__ import annotations

from datetime import date

import pandas as pd

from ..spec import AnalysisSpec
from .issues import QualityIssue
from .periods import _periods, _unit

ALL_CHECKED = 62  # windows of up to this many periods are checked for copies period by period


DUP_FLOOR = 0.005  # a share of copied rows this far above the usual one is a problem


COPIES = 3.0  # extra occurrences per repeated row: a reload copies rows once or twice, a group of
# identical bookings is one row repeated dozens of times (legitimate, and not a data problem)


def find_duplicates(profile: pd.DataFrame, spec: AnalysisSpec) -> list[QualityIssue]:
    """Periods whose share of exact duplicate rows stands out from the usual level."""
    p = profile.copy()
    p["dup_rate"] = 1 - p["distinct_rows"] / p["rows"].where(p["rows"] > 0)
    usual = float(p["dup_rate"].median())
    spread = float(1.4826 * (p["dup_rate"] - usual).abs().median())
    flagged = p[p["dup_rate"] > usual + max(DUP_FLOOR, 5 * spread)]
    if "repeated_rows" in p.columns:  # copies repeat many rows a few times each
        extra = (p["rows"] - p["distinct_rows"]) / p["repeated_rows"].where(p["repeated_rows"] > 0)
        flagged = flagged[extra.reindex(flagged.index).fillna(0) <= COPIES]
    issues = []
    for w_name, w, sign in (("current", spec.current, 1), ("baseline", spec.baseline, -1)):
        f = flagged[(flagged["date"] >= w.start) & (flagged["date"] <= w.end)]
        if f.empty:
            continue
        excess = float((f["value"] - f["distinct_value"]).sum())
        excess = excess if sign > 0 else spec.scaled(excess)  # the baseline's sums are scaled
        issues.append(
            QualityIssue(
                detail="duplicates",
                days=list(f["date"]),
                effect=sign * excess,
                evidence=(
                    f"{_unit(spec, len(f))} in the {w_name} window have {f['dup_rate'].max():.0%} "
                    f"duplicated rows (usual {usual:.0%}), adding {excess:,.0f} {spec.numerator}"
                ),
            )
        )
    return issues


def duplicate_suspects(daily: pd.DataFrame, spec: AnalysisSpec, references: int = 4) -> list[date]:
    """Periods of either window with more rows than usual, plus a few ordinary ones to compare with.

    Duplicated rows always raise a period's row count, so only those periods need the (costly)
    distinct.
    """
    rows = daily.set_index("date")["rows"].astype(float)
    usual = float(rows.median())
    spread = float(1.4826 * (rows - usual).abs().median())
    windows = set(_periods(spec.current, spec)) | set(_periods(spec.baseline, spec))
    if len(windows) <= ALL_CHECKED:
        # copies of a few percent hide in ordinary swings of the row count: check every period
        suspects = [d for d in rows.index if d in windows]
    else:
        suspects = [d for d in rows.index if d in windows and rows[d] > usual + max(3 * spread, 0.02 * usual)]
    if not suspects:
        return []
    ordinary = [d for d in rows.index if d < spec.baseline.start and abs(rows[d] - usual) <= spread]
    return suspects + ordinary[-max(references, len(suspects) + 1) :]
