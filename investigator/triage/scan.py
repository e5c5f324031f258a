"""Detection: each metric's (and each scanned segment's) move in the window, scored against its own
history.

One engine query per source for all its metrics (by time, and by time and each scanned dimension on
its own; every measure (sum, count, distinct count) aggregated in the engine; never one query per
segment); the rest is pandas on that small result.
Daily series are scored all at once (`triage.score`: against the median of the five usual earlier
windows, in the units `analysis.movement` reads; a segment as one of its dimension's values,
`for_family`); coarser windows go through `analysis.movement` one by one.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field

from investigator.analysis.grain import detect_grain
from investigator.analysis.movement import WINDOWS, movement
from investigator.analysis.spec import AnalysisSpec, Measure
from investigator.errors import DataError
from investigator.request import Span, metric_definition, parse_metric
from investigator.sources.windows import Windows, default_end, distinct_dates, plan, plan_windows
from investigator.triage.config import Direction, Target
from investigator.triage.distinct import period_counts, window_counts
from investigator.triage.score import Scale, Scoring, calibrated, for_family, outage_days, score_daily

if TYPE_CHECKING:
    from ibis.expr.types import Table

FALLBACK_PCT = 0.25  # without enough history to know normal variation, only a move this big counts
TOTAL = "__total__"


class ScanItem(BaseModel):
    """One scanned series: a metric as a whole (`segment` {}) or one value of a scanned dimension.
    `change_pct` is a fraction (0.12 is +12%), as in the report; `score` the robust z."""

    metric: str
    segment: dict[str, str] = Field(default_factory=dict)
    change_pct: float | None = None
    score: float | None = None
    flagged: bool = False
    current: float | None = None
    baseline: float | None = None
    change: float | None = Field(None, description="current - baseline, in the metric's units")
    window_start: date | None = None
    window_end: date | None = None
    error: str | None = Field(None, description="why this metric could not be scanned")
    scale: Scale = Field("percent", description="what the score measures: percent, points (a ratio), count")
    note: str | None = Field(None, description="why the score is missing or not to be trusted")
    expected: str | None = Field(None, description="k/n: the same window moved alike in k of n earlier years")


def plan_source(
    table: Table, time_column: str, window: Span | str, baseline: str, end: date | None
) -> Windows:
    """The data's grain, and the window (ending `end`, else the last period in the data) with its
    baseline, by the same planner and rules as `investigate` (config keys named as in the file)."""
    span = Span.of(window) if isinstance(window, str) else window
    return plan_dates(distinct_dates(table, time_column), span, baseline, end)


def plan_dates(dates: list[date], span: Span, baseline: str, end: date | None) -> Windows:
    """`sources.windows.plan`, except that a baseline window without rows (an outage a week ago) is
    no refusal: the scan compares with the median of several earlier windows, never that one alone."""
    try:
        return plan(dates, span, baseline, end, flag="")
    except DataError as e:
        if not str(e).startswith(f"no rows in the {baseline} baseline"):
            raise
    grain = detect_grain(dates)
    current, base = plan_windows(
        span, baseline, grain, span.end or end or default_end(span, grain, dates[-1]), ""
    )
    return Windows(current, base, grain, dates[0], dates[-1], tuple(dates))


def measure_expr(table: Any, m: Measure) -> Any:
    """The engine's aggregate for one measure: a sum, a row or value count, or a distinct count."""
    if m.kind == "count":
        return table[m.column].count() if m.column else table.count()
    if m.kind == "approx_count_distinct":
        return table[m.column].approx_nunique()
    if not m.additive:  # count_distinct, count_distinct_daily
        return table[m.column].nunique()
    return table[m.column].sum()


def query_group(
    table: Any, time_column: str, dims: list[str], measures: list[Measure], days: int = 1
) -> pd.DataFrame:
    """The one engine query for every metric on a source: each measure by time for the whole data,
    and by time and each scanned dimension on its own (a union of one grouping per dimension, so
    the rows returned grow with the sum of the dimensions' values, never their product, and a
    distinct count is counted within each segment, never added up over finer groups). A distinct
    count over windows of `days` days (`count_distinct`) is one more query per measure
    (`triage.distinct`): its column then holds the count over the window ending on each date.
    Columns: date, _dim ("" for the total), _value, _rows, m0, m1, ... in `measures` order."""
    import ibis

    aggs = {"_rows": table.count(), **{f"m{i}": measure_expr(table, m) for i, m in enumerate(measures)}}

    def grouped(dim: str) -> Any:
        if dim:
            out = table.group_by(date=table[time_column], _value=table[dim].cast("string")).aggregate(**aggs)
        else:
            out = table.group_by(date=table[time_column]).aggregate(**aggs)
            out = out.mutate(_value=ibis.literal(None, type="string"))
        return out.mutate(_dim=ibis.literal(dim)).select("date", "_dim", "_value", *aggs)

    parts = [grouped(d) for d in ["", *dims]]
    query = parts[0] if len(parts) == 1 else ibis.union(*parts)
    frame = query.to_pandas()
    frame["date"] = pd.to_datetime(frame["date"]).dt.date
    names = [f"m{i}" for i in range(len(measures))]
    frame[names] = frame[names].astype(float)  # Decimal from some engines
    windowed = {f"m{i}": m for i, m in enumerate(measures) if m.windowed}
    if days > 1 and windowed:
        frame = _windowed(frame, window_counts(table, time_column, dims, windowed, days), names)
    return frame


def _windowed(frame: pd.DataFrame, counts: pd.DataFrame, names: list[str]) -> pd.DataFrame:
    """`frame` with its windowed distinct counts replaced by the counts over each window, on every
    day the table has rows (a segment without rows that day still has users in its window; a day
    without any row, an outage, has no value)."""
    dated = set(frame.loc[frame["_dim"] == "", "date"])
    counts = counts[counts["date"].isin(dated)]
    keys = ["date", "_dim", "_value"]
    mine = [c for c in counts.columns if c not in keys]
    blank = "\x00"
    left = frame.drop(columns=mine).assign(_value=frame["_value"].fillna(blank))
    right = counts.assign(_value=counts["_value"].fillna(blank))
    out = left.merge(right, on=keys, how="outer")
    out[["_rows", *names]] = out[["_rows", *names]].fillna(0.0)
    out["_value"] = out["_value"].where(out["_value"] != blank, None)
    return out


def wide(frame: pd.DataFrame, dims: list[str], top: int, windows: Windows) -> dict[str, pd.DataFrame]:
    """Each measure as a date x series table: the total first, then each value of each dimension
    (the `top` with most rows in the two windows; nulls are in the total only)."""
    measures = [c for c in frame.columns if c.startswith("m") and c[1:].isdigit()]
    total = frame[frame["_dim"] == ""].groupby("date")[measures].sum()
    out = {m: [total[m].rename(TOTAL)] for m in measures}
    recent = (frame["date"] >= windows.baseline.start) & (frame["date"] <= windows.current.end)
    for d in dims:
        mine = (frame["_dim"] == d) & frame["_value"].notna()
        rows = frame.loc[mine & recent].groupby("_value")["_rows"].sum()
        part = frame[mine & frame["_value"].isin(rows.nlargest(top).index)]
        per = part.groupby(["date", "_value"])[measures].sum().unstack("_value")
        for m in measures:
            series = per[m]
            series.columns = [f"{d}\x1f{v}" for v in series.columns]
            out[m].append(series)
    return {m: pd.concat(parts, axis=1).sort_index() for m, parts in out.items()}


def score_each(
    wide_frames: dict[str, pd.DataFrame],
    spec: AnalysisSpec,
    counted: dict[str, tuple[Measure, pd.DataFrame]] | None = None,
) -> pd.DataFrame:
    """`analysis.movement` series by series: for windows of weeks, months, quarters or years. A
    distinct count over the window ("num" or "den" in `counted`: the measure and its counts per
    series over the window ending at every period, `distinct.period_counts`) is read from those
    counts, never from its days added up."""
    counted = counted or {}
    spec = spec.model_copy(update={"computed": {k: m for k, (m, _) in counted.items()}})
    rows = {}
    for col in wide_frames["num"].columns:
        daily = pd.DataFrame(
            {"date": wide_frames["num"].index, spec.numerator: wide_frames["num"][col].to_numpy()}
        )
        if spec.denominator:
            daily[spec.denominator] = wide_frames["den"][col].to_numpy()
        if counted:
            daily.attrs[WINDOWS] = pd.DataFrame(
                {k: c[col] if col in c else pd.Series(0.0, index=c.index) for k, (_, c) in counted.items()}
            )
        m = movement(daily.fillna(0.0), spec)
        rows[col] = {
            "current": m.current,
            "baseline": m.baseline,
            "change": m.change,
            "change_pct": m.change_pct,
            "z": None if m.z is None else float(calibrated(np.array([m.z]), np.array([m.history_points]))[0]),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def flagged(
    pct: float | None, z: float | None, direction: Direction, threshold: float, note: str | None = None
) -> bool:
    """Anomalous, and in the direction that counts (the sign of the score, or of the change when
    there is too little history to score it); never a count under the minimum volume, nor a window
    that ends on an outage."""
    if note is not None and ("min_volume" in note or "outage" in note):
        return False
    if z is None and pct is None:
        return False
    sign = pct if z is None else z
    assert sign is not None
    if abs(sign) < (FALLBACK_PCT if z is None else threshold):
        return False
    return direction == "both" or (direction == "up") == (sign > 0)


Parsed = dict[int, tuple[Measure, Measure | None]]


def parse_targets(table: Any, targets: list[Target]) -> tuple[Parsed, list[ScanItem]]:
    """Each target's measures (by its index), and an item with its `error` for each that does not
    parse or whose columns are missing."""
    names = list(table.schema().names)
    parsed: dict[int, tuple[Measure, Measure | None]] = {}
    items: list[ScanItem] = []
    for i, t in enumerate(targets):
        try:
            num, den = parse_metric(t.expression or metric_definition(t.metric).expression)
            columns = [m.column for m in (num, den) if m is not None and m.column]
            missing = [c for c in [*columns, *t.scan_segments] if c not in names]
            if missing:
                raise DataError(f"column {missing[0]!r} not found; columns are: {', '.join(names)}")
            parsed[i] = (num, den)
        except Exception as e:
            items.append(ScanItem(metric=t.metric, error=str(e).splitlines()[0]))
    return parsed, items


def measures_of(parsed: dict[int, tuple[Measure, Measure | None]]) -> list[Measure]:
    """The distinct measures the parsed targets read, in the order `query_group` names them m0, m1..."""
    return list({m.name: m for pair in parsed.values() for m in pair if m is not None}.values())


def scan_targets(
    table: Any,
    targets: list[Target],
    windows: Windows,
    threshold: float,
    top: int,
    scoring: Scoring | None = None,
) -> list[ScanItem]:
    """Every series of every metric on one table and set of scanned dimensions, from one engine
    query; a metric that does not parse or whose columns are missing is an item with its `error`."""
    parsed, items = parse_targets(table, targets)
    if not parsed:
        return items
    measures = measures_of(parsed)
    daily = daily_windows(windows)
    days = windows.current.days if daily else 1
    time_column, dims = targets[0].time_column, targets[0].scan_segments
    frame = query_group(table, time_column, dims, measures, days)
    windowed = {f"m{i}": m for i, m in enumerate(measures) if m.windowed}
    periods = None
    if windowed and not daily:  # whole months (or coarser): each window's own count, per series
        spec = _spec(targets[0], windows).model_copy(update={"time_column": time_column})
        periods = period_counts(table, spec, dims, windowed, TOTAL, windows.first)
    return items + score_frame(frame, targets, parsed, windows, threshold, top, scoring, periods)


def daily_windows(windows: Windows) -> bool:
    """Whether the windows are scored as days (`score_daily`), not as whole months or coarser
    periods (`score_each`, through `analysis.movement`)."""
    spec = AnalysisSpec(metric="", numerator="num", current=windows.current, baseline=windows.baseline,
                        grain=windows.grain.unit, grain_step=windows.grain.step)  # fmt: skip
    return spec.window_grain.unit == "day"


def score_frame(
    frame: pd.DataFrame,
    targets: list[Target],
    parsed: dict[int, tuple[Measure, Measure | None]],
    windows: Windows,
    threshold: float,
    top: int,
    scoring: Scoring | None = None,
    periods: dict[str, pd.DataFrame] | None = None,
) -> list[ScanItem]:
    """The items of `scan_targets` from `query_group`'s result (a replay scores many mornings from
    one query, each on the rows dated up to its morning); `periods`, the windowed distinct counts
    of windows of whole months or coarser (`distinct.period_counts`, by measure alias)."""
    scoring = (scoring or Scoring()).model_copy(update={"threshold": threshold})
    measures = measures_of(parsed)
    alias = {m.name: f"m{i}" for i, m in enumerate(measures)}
    dims = targets[0].scan_segments
    frames = wide(frame, dims, top, windows)
    dated = sorted(set(frame.loc[frame["_dim"] == "", "date"]))
    outages = outage_days(dated, windows.first, max(windows.current.end, windows.last)) if dated else set()
    items: list[ScanItem] = []
    for i, (num, den) in parsed.items():
        metric = {"num": frames[alias[num.name]], **({"den": frames[alias[den.name]]} if den else {})}
        counts = den is None and num.kind in ("count", "count_distinct")
        whole = (num.windowed, den is not None and den.windowed)
        counted = {
            side: (m, periods[alias[m.name]])
            for side, m in (("num", num), ("den", den))
            if m is not None and periods is not None and alias[m.name] in periods
        }
        items += _score(targets[i], metric, windows, scoring, outages, counts, whole, counted)
    return items


def scan_target(table: Any, target: Target, windows: Windows, threshold: float, top: int) -> list[ScanItem]:
    """Every series of one metric, scored and flagged; a missing column is a `DataError`."""
    items = scan_targets(table, [target], windows, threshold, top)
    if items and items[0].error:
        raise DataError(items[0].error)
    return items


def _score(
    target: Target,
    frames: dict[str, pd.DataFrame],
    windows: Windows,
    scoring: Scoring,
    outages: set[date],
    counts: bool,
    windowed: tuple[bool, bool] = (False, False),
    counted: dict[str, tuple[Measure, pd.DataFrame]] | None = None,
) -> list[ScanItem]:
    spec = _spec(target, windows, "den" in frames)
    if spec.window_grain.unit == "day":
        scores = score_daily(
            frames["num"],
            frames.get("den"),
            spec.current,
            spec.baseline_offset,
            spec.baseline.days,
            scoring=scoring,
            outages=outages,
            counts=counts,
            windowed=windowed,
        )
    else:
        scores = score_each(frames, spec, counted)
    scores = _families(scores)
    items = []
    for name, row in scores.iterrows():
        segment = {} if name == TOTAL else dict([str(name).split("\x1f", 1)])
        pct, z = _number(row["change_pct"]), _number(row["z"])
        note = _text(row.get("note"))
        items.append(
            ScanItem(
                metric=target.metric,
                segment=segment,
                change_pct=pct,
                score=z,
                flagged=flagged(pct, z, target.direction, scoring.threshold, note),
                current=_number(row["current"]),
                baseline=_number(row["baseline"]),
                change=_number(row["change"]),
                window_start=windows.current.start,
                window_end=windows.current.end,
                scale=_text(row.get("scale")) or ("points" if spec.is_ratio else "percent"),
                note=note,
                expected=_text(row.get("expected")),
            )
        )
    return items


def _spec(target: Target, windows: Windows, ratio: bool = False) -> AnalysisSpec:
    """A target's windows as an analysis reads them (the series' measures named "num" and "den")."""
    return AnalysisSpec(
        metric=target.metric,
        numerator="num",
        denominator="den" if ratio else None,
        current=windows.current,
        baseline=windows.baseline,
        grain=windows.grain.unit,
        grain_step=windows.grain.step,
    )


def _families(scores: pd.DataFrame) -> pd.DataFrame:
    """Each segment's z adjusted for how many values of its dimension were scored (`for_family`);
    the total's as it is."""
    dims = pd.Series(
        [str(n).split("\x1f", 1)[0] if n != TOTAL else "" for n in scores.index], index=scores.index
    )
    z = pd.to_numeric(scores["z"], errors="coerce").astype(float)
    out = z.copy()
    for d in set(dims) - {""}:
        mine = dims == d
        out[mine] = for_family(z[mine].to_numpy(), int(z[mine].notna().sum()))
    return scores.assign(z=out)


def severity(item: ScanItem, threshold: float = 3.0) -> float:
    """How unusual a move is, in the same units for every metric: its robust z; without enough
    history to score it, its change against the fallback bar (a move of exactly `FALLBACK_PCT`
    ranks like one at the threshold). Never the change in the metric's own units, which would rank
    a ratio's move (0.002) below any revenue move."""
    if item.score is not None:
        return abs(item.score)
    return abs(item.change_pct or 0.0) / FALLBACK_PCT * threshold


def ranked(items: list[ScanItem], threshold: float = 3.0) -> list[ScanItem]:
    """Flagged items, scored ones first, most severe first (one budget serves every metric), then
    largest relative change; a flag without a score (too little history) ranks below every scored
    one, whatever its size: its `note` says why."""
    hits = [i for i in items if i.flagged]
    return sorted(hits, key=lambda i: (i.score is None, -severity(i, threshold), -abs(i.change_pct or 0.0)))


def _number(x: Any) -> float | None:
    return None if x is None or pd.isna(x) else round(float(x), 6)


def _text(x: Any) -> Any:
    return x if isinstance(x, str) and x else None
