"""Rows that are not there: whole periods or a value's partitions absent in the current window,
and the last periods short across every segment alike, as when loads are late."""

from __future__ import annotations

from datetime import date

import numpy as np
import pandas as pd

from ..spec import AnalysisSpec
from .issues import QualityIssue
from .periods import _expected, _labels, _last_period, _periods, _prior, _unit, expected_periods


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
                own = live[live[dim] == value].groupby("date")["value"].sum()
                sized = [_expected(own, spec, d) for d in lost]  # its same weekdays, not an average day
                effect = -sum(e if np.isfinite(e) else float(typical) for e in sized)
                found.append((value, lost, effect))
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
