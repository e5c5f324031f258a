"""Turn what the user asked for into an `AnalysisSpec`, checking the data can answer it.

Every check runs in the engine, through the `DataSource` seam (Ibis; DuckDB by default), and fails
with a `DataError` that says what to do next.
"""

from __future__ import annotations

import difflib
import re
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, Field, ValidationError

from investigator.analysis.grain import (
    BASELINES,
    BaselineKind,
    Grain,
    WindowError,
    baseline_shift,
    detect_grain,
    month_end,
    parse_window,
    window_grain,
)
from investigator.analysis.spec import AnalysisSpec, Measure, Window, parse_measure
from investigator.config import MetricDefinition, load_metrics
from investigator.errors import DataError, UserError
from investigator.protocols import DataSource
from investigator.sources.identifiers import (
    identifier_dimensions,
    identifier_note,
    label_note,
    window_labels,
)

BASELINE_NAMES = "previous, wow, yoy, mom, qoq"
_END = re.compile(r"^\s*(\d{4})(?:-?(?:(\d{1,2})|[Qq]([1-4])))?\s*$")


class Request(BaseModel):
    """An investigation as the user asked for it (CLI flags or notebook keyword arguments)."""

    metric: str
    data: str | None = Field(
        None,
        description="CSV/Parquet path, connection URL or env:VAR; None uses the metric's or the demo "
        "data. A run stores a URL without its password.",
    )
    table: str | None = Field(None, description="The table (or, for spark://, a Parquet path) at a URL")
    sql: str | None = Field(None, description="A query at a URL, used as the table")
    window: str = "7d"
    end: date | None = None
    baseline: BaselineKind = "previous"
    time_column: str | None = None
    dimensions: list[str] | None = None
    keep_dimensions: list[str] = Field(
        default_factory=list, description="dimensions kept even when their values look like identifiers"
    )
    objective: str | None = None


def plan_windows(window: str, baseline: str, data: Grain, end: date) -> tuple[Window, Window]:
    """The current window (whole periods, the last one holding `end`) and its baseline.

    Windows are `Nd`, `Nw`, `Nmo` (or `Nm`), `Nq`, `Ny`; one finer than the data's periods, or not
    made of them, is refused with the window to use. Raises UserError for text that is not a
    window, DataError for a window or baseline the data's grain cannot answer.
    """
    try:
        n, unit = parse_window(window)
    except WindowError as e:
        raise UserError(str(e)) from None
    try:
        counted, length = window_grain(n, unit, data, end)
        shift = baseline_shift(baseline, counted, data, length, end)
        if counted.unit == "day":
            current = Window(start=end - timedelta(days=length - 1), end=end)
            return current, current.shifted(shift)
        start, stop = counted.window(end, length)
        b_start, b_stop = counted.shift_window(start, stop, -shift)
    except WindowError as e:
        raise DataError(str(e)) from None
    except (OverflowError, ValueError):  # a window or baseline reaching past year 1
        raise UserError(
            f"window {window!r} with the {baseline} baseline reaches before year 1: pick a shorter --window"
        ) from None
    return Window(start=start, end=stop), Window(start=b_start, end=b_stop)


def parse_end(text: str, flag: str = "") -> date:
    """A day (2026-03-29), or a month (2024-03), quarter (2024-Q1) or year (2024): its last day.
    Any day inside the window's last period picks that period."""
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        pass
    m = _END.match(text)
    if m and (m.group(2) is None or 1 <= int(m.group(2)) <= 12):
        month = int(m.group(2)) if m.group(2) else (int(m.group(3)) * 3 if m.group(3) else 12)
        return month_end(date(int(m.group(1)), month, 1))
    raise UserError(f"{flag}end {text!r} is not a date like 2026-03-29 (or a month 2024-03, a year 2024)")


def parse_expression(expression: str) -> tuple[str, str | None]:
    num, sep, den = expression.partition("/")
    num, den = num.strip(), den.strip()
    if not num or (sep and not den) or "/" in den:
        raise UserError(
            f"metric {expression!r} is not a column or a ratio of two columns like revenue/orders"
        )
    return num, den or None


def parse_metric(expression: str) -> tuple[Measure, Measure | None]:
    """The metric's measures: one, or the two sides of a ratio (`sum(revenue)/count_distinct(user_id)`)."""
    num, den = parse_expression(expression)
    try:
        return parse_measure(num), parse_measure(den) if den else None
    except ValueError as e:
        raise UserError(f"metric {expression!r}: {e}") from None


def metric_definition(metric: str) -> MetricDefinition:
    """The metric as `metrics.yaml` defines it, else the name read as a measure or a ratio."""
    known = load_metrics().get(metric)
    if known is not None:
        return known
    parse_metric(metric)  # a UserError that says what is wrong with it
    return MetricDefinition(expression=metric)


def resolve(
    request: Request, data: DataSource | str | Path, definition: MetricDefinition
) -> tuple[AnalysisSpec, Any]:
    """Check the request against the data (a source, or a file path) and build the spec.

    Returns the spec and the opened Ibis table.
    """
    if isinstance(data, DataSource):
        source = data
    else:
        from investigator.sources import source_for

        source = source_for(str(data), request.table or definition.table, request.sql or definition.sql)
    time_column = request.time_column or definition.time_column or "date"
    table = source.open(time_column)
    schema = table.schema()
    columns = list(schema.names)
    notes = list(getattr(source, "notes", []))
    definition, dims_note = _fit_definition(request, definition, columns)
    notes += dims_note
    num, den = parse_metric(definition.expression)
    measures = [num, *([den] if den else [])]
    for col in [time_column, *(m.column for m in measures if m.column)]:
        if col not in columns:
            what = "time column" if col == time_column else "metric column"
            if col == time_column:
                tail = _time_hint(schema, columns, flag="--time-column")
            elif request.data is not None:  # the user's own data: its columns, not the demo's metrics
                close = difflib.get_close_matches(col, columns, n=1)
                tail = f"; did you mean {close[0]!r}?" if close else ""
            else:
                unknown = col == request.metric and col not in load_metrics()
                tail = f"; {_unknown_metric(col)}" if unknown else ""
            raise DataError(f"{what} {col!r} not found; columns are: {', '.join(columns)}{tail}")
    if not schema[time_column].is_date():
        raise DataError(f"time column {time_column!r} holds {schema[time_column]}, not dates")
    for col in (m.column for m in measures if m.kind == "sum" and m.column):
        if not schema[col].is_numeric():
            raise DataError(f"metric column {col!r} holds {schema[col]}, not numbers; pick a numeric column")
    dims = (
        request.dimensions
        or definition.dimensions
        or [
            c
            for c in columns
            if c != time_column
            and c not in {m.column for m in measures}  # counted values (user ids) are no dimension
            and (schema[c].is_string() or schema[c].is_boolean())
        ]
    )
    if len(set(dims)) != len(dims):
        twice = sorted({d for d in dims if dims.count(d) > 1})
        raise UserError(f"dimension(s) {', '.join(map(repr, twice))} given more than once")
    missing = [d for d in dims if d not in columns]
    if missing:
        raise DataError(
            f"dimension(s) {', '.join(map(repr, missing))} not found; columns are: {', '.join(columns)}"
        )
    dates = _distinct_dates(table, time_column)  # the range, the grain and the windows' rows, in one query
    first, last = _date_range(dates)
    grain = detect_grain(dates)
    end = request.end or _default_end(request.window, grain, last)
    current, baseline = plan_windows(request.window, request.baseline, grain, end)
    judged = [d for d in dims if d not in request.keep_dimensions]
    ids = identifier_dimensions(table, time_column, judged, current)
    if ids:
        dims = [d for d in dims if d not in ids]
        notes.append(identifier_note(ids))
    labels = window_labels(table, time_column, [d for d in judged if d in dims], current, baseline)
    if labels:
        dims = [d for d in dims if d not in labels]
        notes.append(label_note(labels))
    notes += _distinct_notes([m for m in measures if m.kind == "count_distinct"], grain, current, dims)
    spec = AnalysisSpec(
        metric=request.metric,
        numerator=num.name,
        denominator=den.name if den else None,
        computed={m.name: m for m in measures if m.kind != "sum"},
        time_column=time_column,
        dimensions=list(dims),
        current=current,
        baseline=baseline,
        baseline_kind=request.baseline,
        grain=grain.unit,
        grain_step=grain.step,
        notes=notes,
    )
    _check_windows(dates, spec, first, last)
    return spec, table


def _fit_definition(
    request: Request, definition: MetricDefinition, columns: list[str]
) -> tuple[MetricDefinition, list[str]]:
    """The definition as it applies to this data. A configured metric belongs to its configured
    data: on other data (`--data`), its name is read as a column when its expression's columns are
    absent, and its dimensions apply only when the data has them (else the data's text columns)."""
    if request.metric not in load_metrics():
        return definition, []  # not a configured metric: the name was the expression
    if request.data is None and definition.data is not None:
        return definition, []  # the metric's own data: its definition holds as written
    try:
        num, den = parse_metric(definition.expression)
    except UserError:
        return definition, []
    needed = [m.column for m in (num, den) if m is not None and m.column]
    if any(c not in columns for c in needed) and request.metric in columns:
        definition = MetricDefinition(expression=request.metric, time_column=definition.time_column)
    dims = definition.dimensions or []
    absent = [d for d in dims if d not in columns]
    if dims and absent and not request.dimensions:
        note = (
            f"The configured dimensions of {request.metric} ({', '.join(absent)} not in this data) "
            "were not used: the data's text columns were."
        )
        return definition.model_copy(update={"dimensions": None}), [note]
    return definition, []


YEARISH = ("year", "yr", "yyyy", "yearmonth", "yyyymm", "period", "month", "quarter", "week")


def _time_hint(schema: Any, columns: list[str], flag: str) -> str:
    """A column that looks like the time: one of date type, else an integer one named like a year
    or a period (`2007`, `202403` are time columns here)."""
    dated = [c for c in columns if schema[c].is_temporal()]
    yearly = [c for c in columns if schema[c].is_integer() and c.lower().strip("_") in YEARISH]
    pick = (dated or yearly)[:1]
    return f"; try {flag} {pick[0]}" if pick else ""


def _distinct_notes(distinct: list[Measure], grain: Grain, current: Window, dims: list[str]) -> list[str]:
    """What a distinct count over a window is here: the sum of each period's distinct count (a
    user active on three days counts three times), and per segment an upper bound."""
    if not distinct:
        return []
    what = f"count_distinct({distinct[0].column})"
    n = grain.covers(current.start, current.end)
    notes = []
    if n > 1:
        notes.append(
            f"{what} over a window of {grain.count(n)} is the sum of each {grain.name}'s distinct count: "
            f"a value seen on three {grain.name}s counts three times, so read it as activity, not as the "
            "window's distinct total"
        )
    if dims:
        notes.append(
            f"{what} per segment is an upper bound of its share: a value in two segments counts in both"
        )
    return notes


def _unknown_metric(metric: str) -> str:
    """A metric name that is neither configured nor a column: the nearest configured names."""
    known = sorted(load_metrics())
    close = difflib.get_close_matches(metric, known, n=1)
    hint = f": did you mean {close[0]!r}?" if close else "."
    return f"{metric!r} is no configured metric either{hint} Configured metrics: {', '.join(known) or 'none'}"


def _distinct_dates(table: Any, time_column: str) -> list[date]:
    """Every date the data has a row on, in order."""
    col = table[time_column]
    frame = table.filter(col.notnull()).select(d=col).distinct().to_pandas()
    return sorted(pd.Timestamp(v).date() for v in frame["d"])


def _default_end(window: str, grain: Grain, last: date) -> date:
    """The last period in the data; for a window of months on daily data, the last whole month."""
    try:
        _, unit = parse_window(window)
    except WindowError:
        return last
    if grain.unit == "day" and unit in ("month", "quarter", "year") and month_end(last) != last:
        return last.replace(day=1) - timedelta(days=1)
    return last


def _date_range(dates: list[date]) -> tuple[date, date]:
    """The first and last date of the data (`dates` in order)."""
    if not dates:
        raise DataError("the data has no rows with a date")
    return dates[0], dates[-1]


def _check_windows(dates: list[date], spec: AnalysisSpec, first: date, last: date) -> None:
    """Refuse windows that stick out of the data or hold no rows, in the data's periods (a window
    holds rows when one of the data's dates falls in it)."""
    counts = {
        "cur": any(spec.current.start <= d <= spec.current.end for d in dates),
        "base": any(spec.baseline.start <= d <= spec.baseline.end for d in dates),
    }
    g = spec.periods
    span = f"the data covers {first} to {last}"
    if spec.grain != "day":
        n = g.index(last) - g.index(first) + 1
        span = f"the data covers {g.label(first)} to {g.label(last)} ({g.count(n)}, {g.adjective})"
    # a window that sticks out of the data would compare a partial sum with a full one
    # a window that runs past the data's end is answered: the quality checks name the periods
    # with no rows yet as the data problem they are; one that starts after it has nothing to say
    if g.index(spec.current.start) > g.index(last):
        last_words = last.isoformat() if spec.grain == "day" else f"its last {g.name} is {g.label(last)}"
        raise DataError(
            f"the window starts {spec.current.start}, after the data ({last_words}); {span}: "
            "pick an earlier --end"
        )
    if g.index(spec.baseline.start) < g.index(first):
        raise DataError(
            f"the {spec.baseline_kind} baseline starts {spec.baseline.start}, before the data; {span}: "
            "pick a later --end, a shorter --window or another --baseline"
        )
    if not counts["cur"]:
        raise DataError(
            f"no rows in the window {spec.current.start} to {spec.current.end}; {span}: pick another --end"
        )
    if not counts["base"]:
        raise DataError(
            f"no rows in the {spec.baseline_kind} baseline {spec.baseline.start} to "
            f"{spec.baseline.end}; {span}: pick another --baseline or --end"
        )


def build_request(
    metric: str | None,
    data: str | None,
    window: str,
    end: str | date | None,
    baseline: str,
    time_column: str | None,
    dimensions: list[str] | str | None,
    objective: str | None,
    flag: str = "",
    table: str | None = None,
    sql: str | None = None,
    keep_dimensions: list[str] | str | None = None,
) -> Request:
    """A request from flag-like values (CLI or keyword arguments), with one message per mistake;
    `flag` prefixes the names in messages ("--" for the command line)."""
    if not metric:
        raise UserError(f"{flag}metric is required, e.g. {flag}metric revenue or {flag}metric revenue/orders")
    if baseline not in BASELINES:
        raise UserError(f"{flag}baseline {baseline!r} is not one of {BASELINE_NAMES}")
    end_day = parse_end(end, flag) if isinstance(end, str) else end
    if isinstance(dimensions, str):
        dimensions = [d.strip() for d in dimensions.split(",") if d.strip()]
    if isinstance(keep_dimensions, str):
        keep_dimensions = [d.strip() for d in keep_dimensions.split(",") if d.strip()]
    fields: dict[str, Any] = {
        "metric": metric, "data": data, "window": window, "end": end_day, "baseline": baseline,
        "time_column": time_column, "dimensions": dimensions or None, "objective": objective,
        "table": table or None, "sql": sql or None, "keep_dimensions": keep_dimensions or [],
    }  # fmt: skip
    try:
        return Request.model_validate(fields)
    except ValidationError as e:
        raise UserError(f"invalid arguments: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
