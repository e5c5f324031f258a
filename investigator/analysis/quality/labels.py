"""Labels that changed under the data: a value relabelled upstream, and a dimension whose nulls
(rows without a label) hold a clearly different share than before. Both move value between
segments, not the total: their effect is 0, and they tell the segment analysis how to read them."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd

from .. import queries
from ..spec import AnalysisSpec
from .issues import QualityIssue
from .periods import _periods


def find_relabelled(
    by_dim: dict[str, pd.DataFrame], daily: pd.DataFrame, spec: AnalysisSpec, since: date
) -> list[QualityIssue]:
    """A value that had rows in every period until it stopped, while another value of the same
    dimension, of a similar size, started in the very next period and kept going: renamed upstream.

    The pair moves value between two labels, not the total, so the issue's effect is 0; it tells
    the segment analysis that the two values are one.
    """
    present = sorted(d for d in daily.loc[daily["rows"] > 0, "date"] if since <= d <= spec.current.end)
    if len(present) < 3:
        return []
    pos = {d: i for i, d in enumerate(present)}
    first_compared = min(spec.baseline.start, spec.current.start)
    issues = []
    for dim, df in by_dim.items():
        live = df[(df["rows"] > 0) & df["date"].isin(pos)]
        if live.empty:
            continue
        at = live["date"].map(pos)
        span = at.groupby(live[dim]).agg(["min", "max", "nunique"])
        size = live.groupby(dim)["value"].sum() / span["nunique"]
        steady = span[span["nunique"] == span["max"] - span["min"] + 1]
        last = len(present) - 1
        olds = steady[(steady["min"] == 0) & (steady["max"] < last)]
        olds = olds[[present[int(i)] >= first_compared for i in olds["max"]]]
        news = steady[(steady["max"] == last) & (steady["min"] > 0)]
        news = news[[present[int(i)] > first_compared for i in news["min"]]]
        used: set[str] = set()
        merged = _merges(olds, news, size)
        for new, group in merged.items():
            used.add(str(new))
            switch = present[int(news.loc[new, "min"])]
            names = ", ".join(f"{dim}={o}" for o in group)
            stop = spec.periods.label(present[int(news.loc[new, "min"]) - 1])
            combined = f"{sum(size[o] for o in group):,.0f} vs {size[new]:,.0f} {spec.numerator}"
            said = (
                f"{names} stop after {stop} and {dim}={new} starts in {spec.periods.label(switch)} at about "
                f"their combined size ({combined} per {spec.periods.name}): merged into {new!r} upstream; "
                "compare them as one segment"
            )
            issues += [_renamed(dim, old, new, present, switch, said) for old in group]
        olds = olds.drop(index=[o for group in merged.values() for o in group])
        for old, row in olds.iterrows():
            fits = [
                new
                for new, r in news.iterrows()
                if r["min"] == row["max"] + 1 and new not in used and _similar(size[old], size[new])
            ]
            if not fits:
                continue
            new = min(fits, key=lambda v: abs(np.log(abs(size[v]) + 1e-9) - np.log(abs(size[old]) + 1e-9)))
            used.add(str(new))
            switch = present[int(row["max"]) + 1]
            said = (
                f"{dim}={old} stops after {spec.periods.label(present[int(row['max'])])} and "
                f"{dim}={new} starts in {spec.periods.label(switch)} at a similar size "
                f"({size[old]:,.0f} vs {size[new]:,.0f} {spec.numerator} per {spec.periods.name}): "
                f"{old!r} looks relabelled {new!r} upstream; compare the two as one segment"
            )
            issues.append(_renamed(dim, old, new, present, switch, said))
    return issues


def _renamed(dim: str, old: object, new: object, present: list[date], at: date, said: str) -> QualityIssue:
    """`old` became `new` from `at` on: no effect on the total, both labels read as one."""
    return QualityIssue(
        detail="relabelled",
        segment={dim: str(old)},
        renamed_to={dim: str(new)},
        days=[d for d in present if d >= at],
        evidence=said,
    )


MERGED = 0.2  # several values that stopped together are one merged value: their sum within 20% of it


def _merges(olds: pd.DataFrame, news: pd.DataFrame, size: pd.Series) -> dict[object, list[object]]:
    """New values that took over several old values at once (a source that folded three categories
    into one): every old value that stopped in the period before the new one started, at least two
    of them, whose sizes add up to the new one's far better than any one of them alone does."""
    out: dict[object, list[object]] = {}
    for new, r in news.iterrows():
        group = [
            old for old, row in olds.iterrows() if row["max"] + 1 == r["min"] and size[old] * size[new] > 0
        ]
        if len(group) < 2:
            continue
        total = float(sum(size[o] for o in group))
        best_single = min(abs(size[o] - size[new]) for o in group)
        if abs(total - size[new]) <= MERGED * abs(size[new]) and abs(total - size[new]) < best_single:
            out[new] = group
    return out


def _similar(a: float, b: float) -> bool:
    return bool(a and b and a * b > 0 and 1 / 3 <= abs(a) / abs(b) <= 3)


def find_null_dimensions(
    by_dim: dict[str, pd.DataFrame], spec: AnalysisSpec, labels: dict[str, str]
) -> list[QualityIssue]:
    """A dimension whose null values (their own segment) hold a clearly different share of the
    numerator in the current window than in the baseline and than usual: labels lost, or rows
    added without one. "Clearly": beyond 2 points, half the usual share, and three times the
    period-to-period noise of the share before the window.

    Effect 0: the values move between segments, not the total; the segment analysis should read
    the null segment as rows whose label is missing, not as a real segment.
    """
    issues = []
    cur_p, base_p = _periods(spec.current, spec), _periods(spec.baseline, spec)
    for dim, df in by_dim.items():
        label = labels.get(dim, queries.NULL)
        df = df.assign(size=df["value"].abs(), null=df[dim] == label)
        by_period = df.groupby("date")["size"].sum()
        nulls = df[df["null"]].groupby("date")["size"].sum().reindex(by_period.index, fill_value=0.0)
        share = (nulls / by_period.where(by_period > 0)).dropna()

        cur, base = (_share_in(nulls, by_period, p) for p in (cur_p, base_p))
        hist = share[share.index < min(spec.current.start, spec.baseline.start)]
        usual = float(hist.median()) if len(hist) >= 4 else base
        spread = float(1.4826 * (hist - usual).abs().median()) if len(hist) >= 4 else 0.0
        rows = max(float(df.loc[df["date"].isin(cur_p), "rows"].sum()), 1.0)
        p = min(max(usual, base, 1 / rows), 0.5)  # a share of few rows is noisy by sampling alone
        noise = max(spread / np.sqrt(max(len(cur_p), 1)), float(np.sqrt(p * (1 - p) / rows)))
        moved = abs(cur - base) >= max(0.02, 0.5 * base, 3 * noise)
        unusual = abs(cur - usual) >= max(0.02, 0.5 * usual, 3 * noise)
        if moved and unusual:
            issues.append(
                QualityIssue(
                    detail="null_values",
                    segment={dim: label},
                    days=cur_p,
                    evidence=(
                        f"{dim} is null for {cur:.1%} of {spec.numerator} in the current window "
                        f"({base:.1%} in the baseline, usually {usual:.1%}): rows lost (or came "
                        f"without) their {dim}"
                    ),
                )
            )
    return issues


def _share_in(part: pd.Series, total: pd.Series, periods: list[date]) -> float:
    t = float(total.reindex(periods).sum())
    return float(part.reindex(periods).sum()) / t if t else 0.0
