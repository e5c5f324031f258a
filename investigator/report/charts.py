"""The report's two charts: the metric over time with the window and baseline shaded, and a bridge
(waterfall) of how segments moved it from the baseline to the window.

The series is drawn at the data's grain (one point per day, week, month, quarter or year, with
years on the axis), so monthly data shows monthly values, never per-day means near zero.

Charts are drawn from small values (`ChartData`) computed once from the run's data, as PNGs made
with matplotlib's object API, so they never touch the caller's pyplot state or backend.
"""

from __future__ import annotations

import base64
import io
from datetime import date, timedelta
from typing import Any

import pandas as pd
from pydantic import BaseModel

from investigator.analysis.causes import RootCause
from investigator.analysis.grain import Grain, GrainUnit
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.fmt import num
from investigator.report.mpldates import (
    auto_locator,
    concise_formatter,
    date_formatter,
    date_of,
    year_locator,
)
from investigator.run.evidence import Evidence

MAX_STEPS = 7  # segments shown in the bridge; the rest are lumped into "other"
CONTEXT_DAYS = 56  # history shown before the earlier of the two windows (daily data)
CONTEXT_PERIODS = {"week": 26, "month": 36, "quarter": 16, "year": 30}  # ... and at coarser grains


class Point(BaseModel):
    day: date
    value: float | None


class Step(BaseModel):
    label: str
    change: float


class ChartData(BaseModel):
    """What the charts show: a per-period series and the bridge from baseline to current."""

    metric: str
    ratio: bool
    series: list[Point]  # one point per period of the data, dated at the period's first day
    current: Window
    baseline: Window
    current_level: float | None  # the window's value per period (or the ratio, for a ratio metric)
    baseline_level: float | None
    grain: GrainUnit = "day"
    grain_step: int = 1
    baseline_total: float
    current_total: float
    breakdown: str  # what the bridge steps are, e.g. "channel"
    steps: list[Step]
    segment: str | None = None  # the leading cause's segment, drawn over time under the total
    segment_series: list[Point] = []
    drivers: ChartData | None = None  # the bridge over the driver tree's parts (`analysis.drivers`)


def chart_data(
    data_path: str,
    spec: AnalysisSpec,
    causes: list[RootCause],
    evidence: Evidence,
    computed: tuple[Any, pd.DataFrame, pd.DataFrame] | None = None,
) -> ChartData:
    """Aggregate the run's data (in the engine) into what the charts need; `computed` is the
    table, per-period totals and period cube when the run already has them (its cause check)."""
    from investigator.analysis.queries import daily_totals, period_cube
    from investigator.sources.filters import run_source

    if computed is not None:
        table, daily, cube = computed
    else:
        table = run_source(data_path, spec).open(spec.time_column)  # the rows the run's filter keeps
        daily, cube = daily_totals(table, spec), period_cube(table, spec)
    earliest = min(spec.baseline.start, spec.current.start)
    if spec.grain == "day":
        first = earliest - timedelta(days=CONTEXT_DAYS)
    else:
        first = spec.periods.shift(earliest, -CONTEXT_PERIODS[spec.grain])
    shown = daily[daily["date"] >= first]
    values = _ratio(shown, spec)
    series = [Point(day=d, value=_finite(v)) for d, v in zip(shown["date"], values, strict=True)]
    base_total, cur_total = (
        spec.scaled(_window_value(daily, spec, spec.baseline)),
        _window_value(daily, spec, spec.current),
    )
    dims = _breakdown_dims(spec, causes, evidence)
    steps = _steps(cube, spec, dims, cur_total - base_total)
    segment, segment_series = _leading_segment(table, spec, causes, first)
    g = spec.periods
    per_period = 1.0 if spec.is_ratio else None
    out = ChartData(
        metric=spec.metric,
        ratio=spec.is_ratio,
        series=series,
        current=spec.current,
        baseline=spec.baseline,
        current_level=_finite(cur_total / (per_period or g.covers(spec.current.start, spec.current.end))),
        # the baseline is scaled to the current window's length (per period, avgN): per its periods
        baseline_level=_finite(base_total / (per_period or g.covers(spec.current.start, spec.current.end))),
        baseline_total=base_total,
        current_total=cur_total,
        breakdown=" × ".join(dims) if dims else "total",
        steps=steps,
        grain=spec.grain,
        grain_step=spec.grain_step,
        segment=segment,
        segment_series=segment_series,
    )
    split = evidence.drivers
    if split is None or not split.split or split.baseline is None or split.current is None:
        return out
    parts = [Step(label=p.name, change=p.part) for p in split.parts]
    tree = {"ratio": False, "breakdown": "driver", "steps": parts, "baseline_total": split.baseline,
            "current_total": split.current}  # fmt: skip
    return out.model_copy(update={"drivers": out.model_copy(update=tree)})


def _leading_segment(
    table: Any, spec: AnalysisSpec, causes: list[RootCause], first: date
) -> tuple[str | None, list[Point]]:
    """The first cause with a segment, per period over the same span as the total: when it moved."""
    from investigator.analysis.queries import daily_totals
    from investigator.fmt import seg

    cause = next((c for c in causes if c.segment and c.kind != "data_quality"), None)
    if cause is None or not all(k in spec.dimensions and v is not None for k, v in cause.segment.items()):
        return None, []
    part = table.filter([table[k].cast("string") == str(v) for k, v in cause.segment.items()])
    daily = daily_totals(part, spec)
    shown = daily[daily["date"] >= first]
    values = _ratio(shown, spec)
    points = [Point(day=d, value=_finite(v)) for d, v in zip(shown["date"], values, strict=True)]
    return (seg(cause.segment), points) if points else (None, [])


def _finite(v: Any) -> float | None:
    return float(v) if v is not None and pd.notna(v) and abs(float(v)) != float("inf") else None


def _ratio(frame: pd.DataFrame, spec: AnalysisSpec) -> pd.Series:
    if spec.denominator is None:
        return frame[spec.numerator]
    return frame[spec.numerator] / frame[spec.denominator].where(frame[spec.denominator] != 0)


def _window_value(daily: pd.DataFrame, spec: AnalysisSpec, w: Window) -> float:
    if spec.windowed:  # a distinct count over the window: the engine's count of the whole window
        from investigator.analysis.movement import window_value

        value = window_value(daily, spec, w)
        return value if value == value else 0.0
    part = daily[(daily["date"] >= w.start) & (daily["date"] <= w.end)]
    n = float(part[spec.numerator].sum())
    if spec.denominator is None:
        return n
    d = float(part[spec.denominator].sum())
    return n / d if d else 0.0


def _breakdown_dims(spec: AnalysisSpec, causes: list[RootCause], evidence: Evidence) -> list[str]:
    """The dimensions of the top cause with a segment; else of the top localized segment; else the
    dimension whose values moved most unevenly; else the first one."""
    for cause in causes:
        if cause.segment and all(k in spec.dimensions for k in cause.segment):
            return list(cause.segment)
    segments = evidence.segments
    if segments is None:
        return spec.dimensions[:1]
    for element in segments.elements:
        keys = list(element.segment)
        if keys and all(k in spec.dimensions for k in keys):
            return keys
    spread = [
        (d.dispersion, d.dimension) for d in segments.broad.dimensions if d.dimension in spec.dimensions
    ]
    return [max(spread)[1]] if spread else spec.dimensions[:1]


def _steps(cube: pd.DataFrame, spec: AnalysisSpec, dims: list[str], total_change: float) -> list[Step]:
    """Each segment's part of the change (mix + rate effects for a ratio), biggest first."""
    if not dims or cube.empty:
        return [Step(label="all data", change=total_change)]
    if not spec.additive and len(dims) == 1:  # a distinct count: each segment's own change
        return _overlapping_steps(cube, spec, dims[0], total_change)
    # sum to the chosen dimensions first: labels are then built for a few rows, not every leaf
    measures = [c for c in cube.columns if c.startswith(("cur_", "base_"))]
    cube = cube.groupby(dims, observed=True, as_index=False)[measures].sum()
    cube["_segment"] = cube[dims[0]].astype(str)
    for d in dims[1:]:
        cube["_segment"] = cube["_segment"] + " · " + cube[d].astype(str)
    if spec.is_ratio:
        from investigator.analysis.ratio import mix_rate

        effects = mix_rate(cube, spec, "_segment")[["_segment", "effect"]]
    else:
        from investigator.analysis.contributions import contributions

        effects = contributions(cube, spec, ["_segment"]).rename(columns={"change": "effect"})
    steps = [
        Step(label=str(s), change=float(e))
        for s, e in zip(effects["_segment"], effects["effect"], strict=True)
    ]
    shown, rest = steps[:MAX_STEPS], steps[MAX_STEPS:]
    if rest:
        shown.append(Step(label=f"other ({len(rest)})", change=sum(s.change for s in rest)))
    return shown


def _overlapping_steps(cube: pd.DataFrame, spec: AnalysisSpec, dim: str, total_change: float) -> list[Step]:
    """A distinct count's segments, each with its own change (mix + rate + overlap for a ratio);
    their changes need not add up to the total's (a user in two segments is in both), so what is
    left is a step of its own."""
    if spec.is_ratio:
        from investigator.analysis.ratio import mix_rate

        effects = mix_rate(cube, spec, dim).rename(columns={dim: "_segment"})[["_segment", "effect"]]
    else:
        from investigator.analysis.contributions import contributions

        effects = contributions(cube, spec, [dim]).rename(columns={dim: "_segment", "change": "effect"})
    steps = [
        Step(label=str(s), change=float(e))
        for s, e in zip(effects["_segment"], effects["effect"], strict=True)
    ]
    shown, rest = steps[:MAX_STEPS], steps[MAX_STEPS:]
    if rest:
        shown.append(Step(label=f"other ({len(rest)})", change=sum(s.change for s in rest)))
    overlap = total_change - sum(s.change for s in shown)
    if abs(overlap) > 1e-9 * max(1.0, abs(total_change)):
        shown.append(Step(label="in several segments", change=overlap))
    return shown


# drawing -----------------------------------------------------------------------------------------
def _figure(width: float, height: float) -> Any:
    """A figure whose margins `_margins` sets from its text: a layout engine would draw the
    figure an extra time to measure it, the largest part of drawing a chart."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110)
    FigureCanvasAgg(fig)  # measures text for `_margins`, draws the PNG
    fig.patch.set_facecolor("white")
    return fig


def _margins(fig: Any, labels: list[str], legend: bool = False, rows: int = 1) -> None:
    """Room for the widest y label on the left, the title (and a legend above the plot) on top,
    the dates below; measured in inches, so a tall chart gets no more room than a short one."""
    from matplotlib.font_manager import FontProperties

    renderer = fig.canvas.get_renderer()
    prop = FontProperties(size=8)
    sizes = [renderer.get_text_width_height_descent(s, prop, ismath=False)[0] for s in labels]
    width, height = fig.get_size_inches()
    left = (max(sizes, default=0) / fig.dpi + 0.25) / width
    top = (0.62 if legend else 0.4) / height
    fig.subplots_adjust(
        left=min(left, 0.45), right=1 - 0.25 / width, top=1 - top, bottom=0.42 / height,
        hspace=0.55 / (height / rows) if rows > 1 else None,
    )  # fmt: skip


def _style(ax: Any, grid: str = "both") -> None:
    from matplotlib.ticker import FuncFormatter

    ax.grid(axis=grid, alpha=0.25)
    ax.spines[["top", "right"]].set_visible(False)
    ax.tick_params(labelsize=8)
    values_axis = ax.xaxis if grid == "x" else ax.yaxis
    values_axis.set_major_formatter(FuncFormatter(lambda v, _: num(v)))


def _signed(x: float) -> str:
    return ("+" if x >= 0 else "") + num(x)


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _grain(c: ChartData) -> Grain:
    return Grain(c.grain, c.grain_step, c.current.start)


def _span_label(g: Grain, w: Window) -> str:
    """A window as people name it: "Mar 23–29 2026", "2024-03", "2023-10..2023-12", "2020-2024"."""
    if g.unit in ("day", "week"):
        first = f"{w.start:%b %d %Y}" if w.start.year != w.end.year else f"{w.start:%b %d}"
        return f"{first}–{w.end:%b %d %Y}"
    a, b = g.label(w.start), g.label(w.end)
    return a if a == b else f"{a}..{b}"


NICE_YEARS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 500, 1000)  # year steps between ticks
MAX_TICKS = 10


def _axis(ax: Any, g: Grain) -> None:
    """Dates at the data's grain, with years shown."""
    from matplotlib.ticker import FuncFormatter

    if g.unit == "year":  # a century of years: every 10th or 20th, on round years
        lo, hi = (date_of(v).year for v in ax.get_xlim())
        step = max(g.step, 1)
        base = next((b for b in NICE_YEARS if b % step == 0 and (hi - lo) / b <= MAX_TICKS), NICE_YEARS[-1])
        ax.xaxis.set_major_locator(year_locator(base))
        ax.xaxis.set_major_formatter(date_formatter("%Y"))
    elif g.unit == "quarter":
        ax.xaxis.set_major_locator(auto_locator(minticks=3, maxticks=10))
        ax.xaxis.set_major_formatter(
            FuncFormatter(lambda v, _: (lambda d: f"{d.year}-Q{(d.month - 1) // 3 + 1}")(date_of(v)))
        )
    else:
        locator = auto_locator(minticks=3, maxticks=10)
        ax.xaxis.set_major_locator(locator)
        # the year as the offset, not "2024-Apr"
        ax.xaxis.set_major_formatter(concise_formatter(locator, ["", "%Y", "%Y", "%Y", "%Y", "%Y"]))


def metric_chart(c: ChartData) -> str:
    """The metric per period of the data (base64 PNG), the baseline and the window shaded with
    their levels; below it, the leading cause's segment over the same periods."""
    fig = _figure(9, 5.4 if c.segment_series else 3.2)
    if c.segment_series:
        ax, below = fig.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    else:
        ax, below = fig.add_subplot(), None
    g = _grain(c)
    unit = g.name if c.grain != "day" or c.grain_step != 1 else "day"
    what = f"per {unit}" if not c.ratio else f"ratio per {unit}"
    _series(ax, c, c.series, g, "#3b6ea5", levels=True)
    ax.set_title(f"{c.metric}, {what}", loc="left", fontsize=10)
    ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncol=2, fontsize=8, frameon=False)
    _style(ax)
    if below is not None:
        _series(below, c, c.segment_series, g, "#c8553d", levels=False)
        below.set_title(f"{c.segment}: the leading cause, {what}", loc="left", fontsize=9)
        _style(below)
    _axis(below if below is not None else ax, g)
    axes = [ax] if below is None else [ax, below]
    ticks = [num(v) for a in axes for v in a.get_yticks()]
    _margins(fig, ticks, legend=True, rows=len(axes))
    return _png(fig)


def _series(ax: Any, c: ChartData, series: list[Point], g: Grain, color: str, levels: bool) -> None:
    """One line per period, the baseline and the window shaded (with their levels on the total)."""
    coarse = c.grain != "day" or c.grain_step != 1
    # a period's point sits in the middle of the period, inside its shading
    when = [
        pd.Timestamp(p.day) + (pd.Timestamp(g.end(p.day)) - pd.Timestamp(p.day) + pd.Timedelta(days=1)) / 2
        if coarse
        else pd.Timestamp(p.day)
        for p in series
    ]
    values = [p.value if p.value is not None else float("nan") for p in series]
    ax.plot(when, values, color=color, lw=1.4, marker="o" if coarse and len(values) <= 60 else None, ms=3)
    for w, level, shade, name in (
        (c.baseline, c.baseline_level, "#8a8f98", "baseline"),
        (c.current, c.current_level, "#e8822e", "window"),
    ):
        if coarse:
            start, end = pd.Timestamp(w.start), pd.Timestamp(w.end) + pd.Timedelta(days=1)
        else:
            start, end = (
                pd.Timestamp(w.start) - pd.Timedelta(hours=12),
                pd.Timestamp(w.end) + pd.Timedelta(hours=12),
            )
        ax.axvspan(start, end, color=shade, alpha=0.18, lw=0, label=f"{name} {_span_label(g, w)}")
        if levels and level is not None:
            ax.hlines(level, start, end, colors=shade, linestyles="--", lw=2)
            ax.annotate(
                num(level), (end, level), xytext=(3, 4), textcoords="offset points", color=shade, fontsize=8
            )


def bridge_chart(c: ChartData) -> str:
    """A waterfall (base64 PNG) from the baseline value through each segment's change to the window's."""
    labels = ["baseline", *[s.label for s in c.steps], "window"]
    levels, lefts, widths, colors = [c.baseline_total], [0.0], [c.baseline_total], ["#8a8f98"]
    running = c.baseline_total
    for s in c.steps:
        lefts.append(running if s.change >= 0 else running + s.change)
        widths.append(abs(s.change))
        colors.append("#3f9b5b" if s.change >= 0 else "#c8553d")
        running += s.change
        levels.append(running)
    lefts.append(0.0)
    widths.append(c.current_total)
    colors.append("#e8822e")
    levels.append(c.current_total)
    lo, hi = min(levels), max(levels)
    pad = (hi - lo) * 0.8 or abs(hi) * 0.05 or 1.0
    axis_lo = lo - pad if lo - pad > 0 or lo < 0 else 0.0  # zoom in on the change unless zero is near
    lefts[0], widths[0] = axis_lo, c.baseline_total - axis_lo
    lefts[-1], widths[-1] = axis_lo, c.current_total - axis_lo

    fig = _figure(9, 0.42 * len(labels) + 1.0)
    ax = fig.add_subplot()
    y = list(range(len(labels)))[::-1]
    ax.barh(y, widths, left=lefts, color=colors, height=0.6)
    total_change = c.current_total - c.baseline_total
    for yi, left, width, step in zip(y[1:-1], lefts[1:-1], widths[1:-1], c.steps, strict=True):
        share = f" ({step.change / total_change:.0%})" if total_change else ""
        ax.annotate(f"{_signed(step.change)}{share}", (left + width, yi), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)  # fmt: skip
    for yi, value in ((y[0], c.baseline_total), (y[-1], c.current_total)):
        ax.annotate(
            num(value), (value, yi), xytext=(4, 0), textcoords="offset points", va="center", fontsize=8
        )
    ax.set_yticks(y, labels, fontsize=8)
    ax.set_xlim(axis_lo, hi + pad * 0.6)
    kind = "mix + rate effect on the ratio" if c.ratio else "change"
    ax.set_title(f"{c.metric}: {kind} by {c.breakdown}", loc="left", fontsize=10)
    _style(ax, grid="x")
    _margins(fig, labels)
    return _png(fig)
