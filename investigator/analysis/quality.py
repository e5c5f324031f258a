"""Data-quality checks: is the movement an artefact of the data rather than the business?

Each issue carries its estimated effect on the change, so the caller can tell a data problem that
explains the movement from one that is merely present. Every check works in the data's periods
(days, weeks, months, years): a monthly series has missing months, never missing days.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from . import queries
from .causes import QualityDetail
from .grain import Grain
from .spec import AnalysisSpec, Window

if TYPE_CHECKING:
    from .history import DimensionHistory

LOOKBACK = {"week": 8, "month": 12, "quarter": 8, "year": 8}  # history periods the segment checks read


class QualityIssue(BaseModel):
    detail: QualityDetail
    segment: dict[str, str] = Field(default_factory=dict)
    days: list[date] = Field(default_factory=list)  # periods affected, by first day (as `daily_totals`)
    effect: float = 0.0  # estimated effect on the metric's change (numerator units)
    share: float = 0.0  # effect / total change of the numerator, within [-1, 1]
    evidence: str
    renamed_to: dict[str, str] = Field(default_factory=dict)  # relabelled: the value now in its place
    non_finite: int = 0  # null_values: how many were NaN or infinite in the data (left out of sums)


class QualityReport(BaseModel):
    kind: Literal["quality"] = "quality"
    metric: str
    numerator_change: float  # the change the shares are of: the numerator's; a ratio's own change for a ratio
    issues: list[QualityIssue]

    @property
    def material(self) -> list[QualityIssue]:
        """Issues that explain a meaningful part of the change."""
        return [i for i in self.issues if abs(i.share) >= 0.25]


def _daily_grain(spec: AnalysisSpec) -> bool:
    return spec.grain == "day" and spec.grain_step == 1


def _periods(w: Window, spec: AnalysisSpec) -> list[date]:
    """The data's periods inside a window, by their first day."""
    if _daily_grain(spec):
        return [d.date() for d in pd.date_range(w.start, w.end, freq="D")]
    return spec.periods.periods(w.start, w.end)


def _prior(spec: AnalysisSpec, period: date, k: int) -> date:
    """The comparable period `k` steps back: the same weekday k weeks earlier for daily data, else
    the k-th period before."""
    if _daily_grain(spec):
        return period - timedelta(days=7 * k)
    return spec.periods.shift(period, -k)


def _expected(series: pd.Series, spec: AnalysisSpec, period: date, k: int = 4) -> float:
    """Mean of the `k` comparable earlier periods that have data (same weekday for daily data)."""
    vals = [series.get(_prior(spec, period, j)) for j in range(1, k + 1)]
    vals = [v for v in vals if v is not None and np.isfinite(v) and v > 0]
    return float(np.mean(vals)) if vals else float("nan")


def _expected_by_weekday(series: pd.Series, day: date, weeks: int = 4) -> float:
    """Mean of the same weekday over the previous weeks that have data."""
    prior = [day - pd.Timedelta(days=7 * k) for k in range(1, weeks + 1)]
    vals = [series.get(d.date() if hasattr(d, "date") else d) for d in prior]
    vals = [v for v in vals if v is not None and np.isfinite(v) and v > 0]
    return float(np.mean(vals)) if vals else float("nan")


def _unit(spec: AnalysisSpec, n: int) -> str:
    return spec.count_label(n)


def _labels(spec: AnalysisSpec, periods: list[date], most: int = 4) -> str:
    g = spec.periods
    shown = ", ".join(g.label(p) for p in periods[:most])
    return shown + (f" and {len(periods) - most} more" if len(periods) > most else "")


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


def expected_periods(daily: pd.DataFrame, spec: AnalysisSpec, periods: list[date]) -> list[date]:
    """The periods among `periods` the data's own rhythm says should have rows.

    Daily data: the weekdays that had rows on at least half of their days before the window (a
    weekday-only series does not miss its weekends; irregular event data misses nothing). Coarser
    data: every period, when the history before the window has rows in at least half its periods.
    """
    start = spec.current.start
    hist = sorted(d for d in daily.loc[daily["rows"] > 0, "date"] if d < start)
    if len(hist) < 2:
        return periods
    if _daily_grain(spec):
        span = pd.date_range(hist[0], start - pd.Timedelta(days=1).to_pytimedelta(), freq="D")
        if len(span) < 14:
            return periods
        have = pd.Series([d.weekday() for d in hist]).value_counts()
        days = pd.Series(span.day_of_week).value_counts()
        regular = {int(k) for k in days.index if have.get(k, 0) >= 0.5 * days[k]}
        return [p for p in periods if p.weekday() in regular]
    g = spec.periods
    grid = g.index(start) - g.index(hist[0])
    return periods if len(hist) >= 0.5 * grid else []


def find_missing(
    by_dim: dict[str, pd.DataFrame],
    daily: pd.DataFrame,
    spec: AnalysisSpec,
    since: date | None = None,
    skip: dict[str, set[str]] | None = None,
) -> list[QualityIssue]:
    """Whole periods, or a dimension value's partitions, absent in the current window.

    A value's partitions count as missing only when the value had rows in every period of the
    history read (`since` up to the window): an attribute that is simply absent on some days (a
    weather label) is not missing data. `skip` holds values explained otherwise (relabelled).
    """
    issues = []
    present = set(daily.loc[daily["rows"] > 0, "date"])
    cur_periods = _periods(spec.current, spec)
    gone = [d for d in expected_periods(daily, spec, cur_periods) if d not in present]
    if gone:
        series = daily.set_index("date")[spec.numerator]
        base = daily.loc[daily["date"].isin(_periods(spec.baseline, spec)), spec.numerator]
        typical = float(base.mean()) if base.notna().any() else float("nan")
        expect = [_expected(series, spec, d) for d in gone]
        effect = -float(sum(e if np.isfinite(e) else typical for e in expect))
        last = _last_period(daily)
        ended = last is not None and all(d > last for d in gone)
        where = (
            f"the data ends {spec.periods.label(last)}: no rows yet in {_unit(spec, len(gone))} of the "
            f"current window ({_labels(spec, gone)})"
            if ended and last is not None
            else f"no rows at all in {_unit(spec, len(gone))} of the current window ({_labels(spec, gone)})"
        )
        issues.append(
            QualityIssue(
                detail="missing_data",
                days=gone,
                effect=effect if np.isfinite(effect) else 0.0,
                evidence=f"{where}; about {-effect:,.0f} {spec.numerator} missing",
            )
        )
    start = since if since is not None else spec.baseline.start
    hist_periods = sorted(d for d in present if start <= d < spec.current.start)
    base_periods = _periods(spec.baseline, spec)
    for dim, df in by_dim.items():
        if not hist_periods:
            break
        live = df[df["rows"] > 0]
        hist = live[live["date"].isin(hist_periods)]
        seen = hist.groupby(dim)["date"].nunique()
        base = live[live["date"].isin(base_periods)]
        per_period = base.groupby(dim)["value"].sum() / base.groupby(dim)["date"].nunique()
        hist_per_period = hist.groupby(dim)["value"].sum() / seen.clip(lower=1)
        cur = live[live["date"].isin(cur_periods)]
        found = []
        for value in seen.index[seen >= len(hist_periods)]:
            if value in (skip or {}).get(dim, set()):
                continue
            # the value was there in every period before but is missing in periods the data has
            have = set(cur.loc[cur[dim] == value, "date"])
            lost = [d for d in cur_periods if d in present and d not in have]
            typical = per_period.get(value, hist_per_period[value])
            if lost and _level_held(cur.loc[cur[dim] == value, "value"], float(typical)):
                found.append((value, lost, -float(typical) * len(lost)))
        for value, lost, effect in sorted(found, key=lambda f: f[2])[:3]:
            issues.append(
                QualityIssue(
                    detail="missing_data",
                    segment={dim: str(value)},
                    days=lost,
                    effect=effect,
                    evidence=(
                        f"{dim}={value} has no rows in {len(lost)} of {_unit(spec, len(cur_periods))} "
                        f"of the current window (present in all {_unit(spec, len(hist_periods))} "
                        f"before); about {-effect:,.0f} {spec.numerator} missing"
                    ),
                )
            )
    return _keep_finest(issues)


HELD = 2 / 3  # a value's present periods at this part of its usual level: its gaps are lost rows


def _level_held(present: pd.Series, typical: float) -> bool:
    """A value's absent periods are missing data only when it ran at about its usual level in the
    periods it is present: a value that also shrank where present declined (its gaps are the
    decline showing), it did not lose partitions."""
    if present.empty or not np.isfinite(typical) or typical == 0:
        return True
    return bool(float(present.mean()) / typical >= HELD)


def _keep_finest(issues: list[QualityIssue]) -> list[QualityIssue]:
    """A missing partition shows in one dimension; other dimensions only echo it as lower totals,
    so keep segment issues of the dimension with the largest missing effect."""
    seg = [i for i in issues if i.segment]
    if not seg:
        return issues
    best_dim = next(iter(max(seg, key=lambda i: abs(i.effect)).segment))
    return [i for i in issues if not i.segment or best_dim in i.segment]


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
            issues.append(
                QualityIssue(
                    detail="relabelled",
                    segment={dim: str(old)},
                    renamed_to={dim: str(new)},
                    days=[d for d in present if d >= switch],
                    evidence=(
                        f"{dim}={old} stops after {spec.periods.label(present[int(row['max'])])} and "
                        f"{dim}={new} starts in {spec.periods.label(switch)} at a similar size "
                        f"({size[old]:,.0f} vs {size[new]:,.0f} {spec.numerator} per {spec.periods.name}): "
                        f"{old!r} looks relabelled {new!r} upstream; compare the two as one segment"
                    ),
                )
            )
    return issues


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


def find_incomplete_recent(
    by_dim: dict[str, pd.DataFrame], daily: pd.DataFrame, spec: AnalysisSpec
) -> list[QualityIssue]:
    """The last periods of the window low across every segment alike, as when loads are late."""
    series = daily.set_index("date")[spec.numerator]
    cur_days = [d for d in _periods(spec.current, spec) if d in series.index]
    if len(cur_days) < 3 or cur_days[-1] != _last_period(daily):
        return []  # late loads leave the data's last periods short, not a window inside the data
    ratio = pd.Series({d: series[d] / _expected(series, spec, d) for d in cur_days})
    head = float(ratio.iloc[:-3].median()) if len(ratio) > 3 else 1.0
    tail: list[date] = []
    for d in reversed(cur_days):  # walk back from the end while periods are clearly short
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
                df[df["date"] == _prior(spec, d, k)].groupby(dim)["value"].sum()
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
    shortfall = float(sum(_expected(series, spec, d) * head - series[d] for d in tail))
    return [
        QualityIssue(
            detail="incomplete_recent_data",
            days=tail,
            effect=-shortfall,
            evidence=(
                f"the last {_unit(spec, len(tail))} are at {ratio[tail].mean():.0%} of their usual level "
                f"(earlier window {spec.periods.name}s {head:.0%}), alike across all segments; about "
                f"{shortfall:,.0f} {spec.numerator} not yet loaded"
            ),
        )
    ]


def _last_period(daily: pd.DataFrame) -> date | None:
    live = daily.loc[daily["rows"] > 0, "date"]
    return None if live.empty else live.max()


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


ALL_CHECKED = 62  # windows of up to this many periods are checked for copies period by period
DUP_FLOOR = 0.005  # a share of copied rows this far above the usual one is a problem
COPIES = 3.0  # extra occurrences per repeated row: a reload copies rows once or twice, a group of
# identical bookings is one row repeated dozens of times (legitimate, and not a data problem)


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


def lookback_start(spec: AnalysisSpec) -> date:
    """Where the per-segment checks start reading: the baseline, and at least five weeks (daily
    data) or a year or so of periods before the current window."""
    if _daily_grain(spec):
        back = spec.current.start - timedelta(days=35)
    else:
        g: Grain = spec.periods
        back = g.shift(spec.current.start, -LOOKBACK[g.unit])
    return min(spec.baseline.start, back)


def _recent_by_dimension(
    table: Any, spec: AnalysisSpec, since: date, history: DimensionHistory | None
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

    return total(spec.current) - total(spec.baseline)


def _ratio_of(table: Any, spec: AnalysisSpec, w: Window, segment: dict[str, str]) -> float:
    """The ratio over a window, within a segment ({}: all of it); NaN when it has no denominator."""
    t = queries.measured(queries.leaves(table), spec)
    cond = queries._in(t, spec, w.start, w.end)
    for k, v in segment.items():
        cond &= t[k].cast("string") == v
    agg = {m: queries.measure(t, spec, m) for m in spec.measures}
    row = t.filter(cond).aggregate(**agg).to_pandas().iloc[0]
    n, d = (float(row[m]) if pd.notna(row[m]) else 0.0 for m in spec.measures)
    return n / d if d else float("nan")


def _in_ratio_units(issues: list[QualityIssue], table: Any, daily: pd.DataFrame, spec: AnalysisSpec) -> float:
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
    table: Any,
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
