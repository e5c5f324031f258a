"""Detection: each metric's (and each scanned segment's) move in the window, scored against its own
history.

One engine query per source for all its metrics (by time, and by time and each scanned dimension on
its own; every measure (sum, count, distinct count) aggregated in the engine; never one query per
segment); the rest is pandas on that small result.
The score is the one `analysis.movement` uses: the window's change against its baseline, as a
robust z (median/MAD) among the same-length windows before it, aligned to the same weekday unless
the window spans whole weeks, so a weekly pattern cancels out. Daily series are scored all at
once (vectorised); coarser windows go through `analysis.movement` one by one.
"""

from __future__ import annotations

import warnings
from datetime import date, timedelta
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from pydantic import BaseModel, Field
from scipy import stats

from investigator.analysis.movement import MIN_HISTORY, movement
from investigator.analysis.spec import AnalysisSpec, Measure, Window
from investigator.errors import DataError
from investigator.request import Span, metric_definition, parse_metric
from investigator.sources.windows import Windows, distinct_dates, plan
from investigator.triage.config import Direction, Target

if TYPE_CHECKING:
    from ibis.expr.types import Table

MAD_EFFICIENCY = 0.37  # a MAD spread is worth this share of as many points' standard deviation
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


def plan_source(
    table: Table, time_column: str, window: Span | str, baseline: str, end: date | None
) -> Windows:
    """The data's grain, and the window (ending `end`, else the last period in the data) with its
    baseline, by the same planner and rules as `investigate` (config keys named as in the file)."""
    span = Span.of(window) if isinstance(window, str) else window
    return plan(distinct_dates(table, time_column), span, baseline, end, flag="")


def measure_expr(table: Any, m: Measure) -> Any:
    """The engine's aggregate for one measure: a sum, a row or value count, or a distinct count."""
    if m.kind == "count":
        return table[m.column].count() if m.column else table.count()
    if m.kind == "approx_count_distinct":
        return table[m.column].approx_nunique()
    if not m.additive:  # count_distinct, count_distinct_daily
        return table[m.column].nunique()
    return table[m.column].sum()


def query_group(table: Any, time_column: str, dims: list[str], measures: list[Measure]) -> pd.DataFrame:
    """The one engine query for every metric on a source: each measure by time for the whole data,
    and by time and each scanned dimension on its own (a union of one grouping per dimension, so
    the rows returned grow with the sum of the dimensions' values, never their product, and a
    distinct count is counted within each segment, never added up over finer groups). Columns:
    date, _dim ("" for the total), _value, _rows, m0, m1, ... in `measures` order."""
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
    return frame


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


def score_daily(
    num: pd.DataFrame, den: pd.DataFrame | None, current: Window, offset: int, base_days: int | None = None
) -> pd.DataFrame:
    """Every series' window value, baseline, change and robust z at once (daily data, windows of
    days); the same numbers `analysis.movement` gives one series at a time. `base_days` is the
    baseline's length when it differs from the window's (`avg4`: four windows, their sum scaled
    to one window: their mean), `offset` the days between the two windows' ends."""
    days = pd.date_range(num.index.min(), max(num.index.max(), current.end), freq="D").date
    length = current.days
    num = num.reindex(days).fillna(0.0)
    dens = den.reindex(days).fillna(0.0) if den is not None else None

    def rolled(periods: int) -> pd.DataFrame:
        out = num.rolling(periods).sum()
        if dens is None:
            return out if periods == length else out * (length / periods)
        den_w = dens.rolling(periods).sum()
        return out / den_w.where(den_w != 0)

    value = rolled(length)
    base = (value if base_days in (None, length) else rolled(base_days or length)).shift(offset)
    change = ((value - base) / base.abs()).replace([np.inf, -np.inf], np.nan)
    ends = pd.DatetimeIndex(pd.to_datetime(list(days)))
    keep = np.asarray(ends.date <= current.start - timedelta(days=1))
    if length % 7:
        keep &= np.asarray(ends.day_of_week == pd.Timestamp(current.end).day_of_week)
    hist = change.to_numpy(dtype=float)[keep]
    count = np.sum(~np.isnan(hist), axis=0)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a series without history is all NaN
        med = np.nanmedian(hist, axis=0)
        spread = 1.4826 * np.nanmedian(np.abs(hist - med), axis=0)
        spread = np.where(spread > 0, spread, np.nanstd(hist, axis=0))
    row = days.tolist().index(current.end)
    pct = change.to_numpy(dtype=float)[row]
    with np.errstate(all="ignore"):
        z = np.where((count >= MIN_HISTORY) & (spread > 0), (pct - med) / spread, np.nan)
    step = 1 if length % 7 == 0 else 7  # days between the history windows' ends
    z = calibrated(z, count * min(1.0, np.sqrt(step / length)))  # overlapping windows share days
    cur, prev = value.to_numpy(dtype=float)[row], base.to_numpy(dtype=float)[row]
    return pd.DataFrame(
        {"current": cur, "baseline": prev, "change": cur - prev, "change_pct": pct, "z": z},
        index=num.columns,
    )


def calibrated(z: np.ndarray, n: np.ndarray) -> np.ndarray:
    """A z from `n` history points as the normal score with the same tail probability: the median
    and MAD of a short history are themselves uncertain (a t tail, and the new point's own
    prediction error), so 16 points need a bigger move than 80 for the same score. Without this a
    3-day window with four months of history is flagged in one series out of twenty by chance."""
    n = np.maximum(np.asarray(n, dtype=float), 2.0)
    t = np.abs(z) / np.sqrt(1 + np.pi / 2 / n)
    with np.errstate(all="ignore"):
        tail = stats.t.sf(t, df=np.maximum(MAD_EFFICIENCY * (n - 1), 1.0))
        out = np.sign(z) * np.minimum(stats.norm.isf(tail), 50.0)
    return np.where(np.isnan(z), np.nan, out)


def score_each(wide_frames: dict[str, pd.DataFrame], spec: AnalysisSpec) -> pd.DataFrame:
    """`analysis.movement` series by series: for windows of weeks, months, quarters or years."""
    rows = {}
    for col in wide_frames["num"].columns:
        daily = pd.DataFrame(
            {"date": wide_frames["num"].index, spec.numerator: wide_frames["num"][col].to_numpy()}
        )
        if spec.denominator:
            daily[spec.denominator] = wide_frames["den"][col].to_numpy()
        m = movement(daily.fillna(0.0), spec)
        rows[col] = {
            "current": m.current,
            "baseline": m.baseline,
            "change": m.change,
            "change_pct": m.change_pct,
            "z": None if m.z is None else float(calibrated(np.array([m.z]), np.array([m.history_points]))[0]),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def flagged(pct: float | None, z: float | None, direction: Direction, threshold: float) -> bool:
    """Anomalous, and in the direction that counts (the sign of the score, or of the change when
    there is too little history to score it)."""
    if pct is None:
        return False
    sign = pct if z is None else z
    if abs(sign) < (FALLBACK_PCT if z is None else threshold):
        return False
    return direction == "both" or (direction == "up") == (sign > 0)


def scan_targets(
    table: Any, targets: list[Target], windows: Windows, threshold: float, top: int
) -> list[ScanItem]:
    """Every series of every metric on one table and set of scanned dimensions, from one engine
    query; a metric that does not parse or whose columns are missing is an item with its `error`."""
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
    if not parsed:
        return items
    measures = list({m.name: m for pair in parsed.values() for m in pair if m is not None}.values())
    alias = {m.name: f"m{i}" for i, m in enumerate(measures)}
    dims = targets[0].scan_segments
    frames = wide(query_group(table, targets[0].time_column, dims, measures), dims, top, windows)
    for i, (num, den) in parsed.items():
        metric = {"num": frames[alias[num.name]], **({"den": frames[alias[den.name]]} if den else {})}
        items += _score(targets[i], metric, windows, threshold)
    return items


def scan_target(table: Any, target: Target, windows: Windows, threshold: float, top: int) -> list[ScanItem]:
    """Every series of one metric, scored and flagged; a missing column is a `DataError`."""
    items = scan_targets(table, [target], windows, threshold, top)
    if items and items[0].error:
        raise DataError(items[0].error)
    return items


def _score(
    target: Target, frames: dict[str, pd.DataFrame], windows: Windows, threshold: float
) -> list[ScanItem]:
    spec = AnalysisSpec(
        metric=target.metric,
        numerator="num",
        denominator="den" if "den" in frames else None,
        current=windows.current,
        baseline=windows.baseline,
        grain=windows.grain.unit,
        grain_step=windows.grain.step,
    )
    if spec.window_grain.unit == "day":
        scores = score_daily(
            frames["num"], frames.get("den"), spec.current, spec.baseline_offset, spec.baseline.days
        )
    else:
        scores = score_each(frames, spec)
    items = []
    for name, row in scores.iterrows():
        segment = {} if name == TOTAL else dict([str(name).split("\x1f", 1)])
        pct, z = _number(row["change_pct"]), _number(row["z"])
        items.append(
            ScanItem(
                metric=target.metric,
                segment=segment,
                change_pct=pct,
                score=z,
                flagged=flagged(pct, z, target.direction, threshold),
                current=_number(row["current"]),
                baseline=_number(row["baseline"]),
                change=_number(row["change"]),
                window_start=windows.current.start,
                window_end=windows.current.end,
            )
        )
    return items


def severity(item: ScanItem, threshold: float = 3.0) -> float:
    """How unusual a move is, in the same units for every metric: its robust z; without enough
    history to score it, its change against the fallback bar (a move of exactly `FALLBACK_PCT`
    ranks like one at the threshold). Never the change in the metric's own units, which would rank
    a ratio's move (0.002) below any revenue move."""
    if item.score is not None:
        return abs(item.score)
    return abs(item.change_pct or 0.0) / FALLBACK_PCT * threshold


def ranked(items: list[ScanItem], threshold: float = 3.0) -> list[ScanItem]:
    """Flagged items, most severe first (one budget serves every metric), then largest relative change."""
    hits = [i for i in items if i.flagged]
    return sorted(hits, key=lambda i: (-severity(i, threshold), -abs(i.change_pct or 0.0)))


def _number(x: Any) -> float | None:
    return None if x is None or pd.isna(x) else round(float(x), 6)
