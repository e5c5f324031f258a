"""Turn what the user asked for into an `AnalysisSpec`, checking the data can answer it.

Every check runs in the engine, through the `DataSource` seam (Ibis; DuckDB by default), and fails
with a `DataError` that says what to do next.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from investigator.analysis.grain import Grain
from investigator.analysis.reading import filtered, user_columns
from investigator.analysis.spec import AnalysisSpec, Driver, Measure, RowFilter, Window, parse_tree
from investigator.config import MetricDefinition, load_metrics
from investigator.errors import DataError, UserError
from investigator.request import Request, named_metrics, parse_metric
from investigator.sources.base import DataSource
from investigator.sources.filters import check_rows, parse_filter
from investigator.sources.identifiers import (
    identifier_dimensions,
    identifier_note,
    label_note,
    window_labels,
)
from investigator.sources.windows import distinct_dates, plan

if TYPE_CHECKING:
    from ibis.expr.types import Table


def request_source(data: str, request: Request, definition: MetricDefinition) -> DataSource:
    """The source a run reads: the request's table or query, else its metric definition's. Only
    the request's own table or query, asked by the process owner, is the owner's: a definition's
    query never is (someone else may have written it)."""
    from investigator.sources import source_for

    own = request.by_owner and (bool(request.sql) or not definition.sql)  # a definition's query: never
    return source_for(data, request.table or definition.table, request.sql or definition.sql, own=own)


def refuse_early(request: Request, data: str, definition: MetricDefinition) -> None:
    """The refusals that need only the data's columns and their types (a metric column, a dimension
    or a time column not there, a time column that is not dates), given before a kernel starts for
    the run: they take as long as opening the file, not as a run's start."""
    source = request_source(data, request, definition)
    try:
        time_column = request.time_column or definition.time_column or "date"
        schema = source.open(time_column).schema()
        fitted, _ = _fit_definition(request, definition, user_columns(schema.names))
        check_columns(request, fitted, schema, time_column)
    finally:
        source.close()


def check_columns(request: Request, definition: MetricDefinition, schema: Any, time_column: str) -> None:
    """The question against the data's columns and types only: the time column and the metric's
    columns are there, the time column holds dates and a summed column numbers, and the dimensions
    named are there (one the filter fixes to one value is the filter's to check)."""
    columns = user_columns(schema.names)
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
    named = request.dimensions or []
    missing = [d for d in named if d not in columns and not (request.filter and d in request.filter)]
    if missing and len(set(named)) == len(named):
        raise DataError(
            f"dimension(s) {', '.join(map(repr, missing))} not found; columns are: {', '.join(columns)}"
        )


def resolve(
    request: Request, data: DataSource | str | Path, definition: MetricDefinition
) -> tuple[AnalysisSpec, Table]:
    """Check the request against the data (a source, or a file path) and build the spec.

    Returns the spec and the opened Ibis table.
    """
    if isinstance(data, DataSource):
        source = data
    else:
        source = request_source(str(data), request, definition)
    time_column = request.time_column or definition.time_column or "date"
    table = source.open(time_column)
    schema = table.schema()
    columns = user_columns(schema.names)
    notes = list(source.notes)
    definition, dims_note = _fit_definition(request, definition, columns)
    notes += dims_note
    num, den = parse_metric(definition.expression)
    measures = [num, *([den] if den else [])]
    check_columns(request, definition, schema, time_column)
    row_filter = parse_filter(request.filter, table, _dialect(source)) if request.filter else None
    everything = table
    if row_filter is not None:  # from here on, the run's data is the rows the filter keeps
        everything, table = table, filtered(table, row_filter)
        check_rows(everything, table, row_filter, time_column)
        notes.insert(0, _filter_note(row_filter))
    dims = (
        request.dimensions
        or definition.dimensions
        or text_columns(schema, time_column, {m.column for m in measures if m.column})
    )
    if len(set(dims)) != len(dims):
        twice = sorted({d for d in dims if dims.count(d) > 1})
        raise UserError(f"dimension(s) {', '.join(map(repr, twice))} given more than once")
    fixed = [c for c, _ in row_filter.segment] if row_filter is not None else []
    dims = [d for d in dims if d not in fixed]  # one value left: nothing to localize
    missing = [d for d in dims if d not in columns]
    if missing:
        raise DataError(
            f"dimension(s) {', '.join(map(repr, missing))} not found; columns are: {', '.join(columns)}"
        )
    windows = plan(distinct_dates(table, time_column), request.window, request.baseline, request.end)
    grain, current, baseline = windows.grain, windows.current, windows.baseline
    if row_filter is not None:
        check_rows(everything, table, row_filter, time_column, [current, baseline])
    judged = [d for d in dims if d not in request.keep_dimensions]
    ids = identifier_dimensions(table, time_column, judged, current)
    if ids:
        dims = [d for d in dims if d not in ids]
        notes.append(identifier_note(ids))
    labels = window_labels(table, time_column, [d for d in judged if d in dims], current, baseline)
    if labels:
        dims = [d for d in dims if d not in labels]
        notes.append(label_note(labels))
    notes += _distinct_notes([m for m in measures if not m.additive], grain, current, dims)
    if any(m.windowed for m in measures) and any(not m.additive and not m.windowed for m in measures):
        raise UserError(
            f"metric {definition.expression!r} mixes a distinct count over the window with a daily one "
            "(count_distinct_daily): use one kind on both sides"
        )
    approx = any(m.kind == "approx_count_distinct" for m in measures)
    drivers, tree_note = driver_tree(
        request.metric,
        definition,
        measures,
        columns,
        other_data=bool(request.data),
        semantic_manifest=request.semantic_manifest,
    )
    notes += tree_note
    spec = AnalysisSpec(
        # the headline, the charts and memory name what was measured: the filtered rows' metric
        metric=_labelled(request.metric, row_filter, approx),
        numerator=num.name,
        denominator=den.name if den else None,
        computed={m.name: m for m in measures if m.kind != "sum"},
        time_column=time_column,
        dimensions=list(dims),
        current=current,
        baseline=baseline,
        baseline_kind=str(request.baseline),
        grain=grain.unit,
        grain_step=grain.step,
        filter=row_filter,
        notes=notes,
        data_last=windows.last,
        drivers=drivers,
    )
    if spec.windowed:
        try:
            spec.tiles(spec.baseline)
        except ValueError as e:
            raise UserError(f"--baseline {request.baseline}: {e}") from None
    if spec.baseline_words:  # a baseline longer or shorter than the window: compared per period
        spec.notes.append(f"Baseline {request.baseline}: compared {spec.baseline_words}.")
    return spec, table


def driver_tree(
    metric: str,
    definition: MetricDefinition,
    measures: list[Measure],
    columns: list[str],
    other_data: bool = False,
    semantic_manifest: str | None = None,
) -> tuple[list[Driver], list[str]]:
    """The metric's driver tree (`drivers:` in its definition) as factors of named metrics of sums
    and counts, and a note when the tree was left out (a factor not defined, a column not in the
    data, a distinct count: distinct users do not multiply). On other data than the metric's
    (`--data`), a tree whose columns that data lacks is left out without a word: a table of orders
    has no sessions, and a note on every run of it would be noise. The nodes are the named metrics
    of the dbt semantic manifest when the question reads one, else of `metrics.yaml`."""
    if not definition.drivers:
        return [], []
    named = named_metrics(semantic_manifest)
    out, why = [], ""
    for name, power in parse_tree(definition.drivers):
        d = named.get(name)
        if d is None:
            why = f"{name!r} is not a named metric"
            break
        num, den = parse_metric(d.expression)
        sides = [m for m in (num, den) if m is not None]
        gone = [m.column for m in sides if m.column and m.column not in columns]
        if gone:
            if other_data:
                return [], []
            why = f"column {gone[0]!r} of {name} is not in this data"
            break
        if any(not m.additive for m in [*sides, *measures]):
            why = "distinct counts do not multiply"
            break
        out.append(Driver(name=name, numerator=num, denominator=den, power=1 if power > 0 else -1))
    if why:
        return [], [f"The driver tree of {metric} ({definition.drivers}) was not used: {why}."]
    return out, []


def _labelled(metric: str, row_filter: RowFilter | None, approx: bool) -> str:
    """The metric's name in every output: with its filter, and saying when it is approximate."""
    name = f"{metric} [{row_filter.described}]" if row_filter is not None else metric
    return f"{name} (approximate)" if approx and "approx_count_distinct" not in metric else name


def _dialect(source: DataSource) -> str | None:
    """The SQL dialect a filter is read in: the engine's behind a URL, DuckDB's for a file."""
    from investigator.sources.readonly import dialect
    from investigator.sources.urls import expand, is_url, scheme

    data = getattr(source, "data", None)
    return dialect(scheme(expand(data))) if isinstance(data, str) and is_url(data) else "duckdb"


def _filter_note(row_filter: RowFilter) -> str:
    return (
        f"Filtered: only rows where {row_filter.described} are counted (--filter {row_filter.text}); "
        "every number here is of those rows."
    )


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


def text_columns(schema: Any, time_column: str, measured: set[str]) -> list[str]:
    """The dimensions a run localizes when none are named: the text and boolean columns, not the
    time and not a column the metric counts (user ids are no dimension). `describe_data` shows
    the same list, so an assistant sees what a run would use."""
    return [
        c
        for c in user_columns(schema.names)
        if c != time_column and c not in measured and (schema[c].is_string() or schema[c].is_boolean())
    ]


def time_candidate(schema: Any, columns: list[str]) -> str | None:
    """A column that looks like the time: one of date type, else an integer one named like a year
    or a period (`2007`, `202403` are time columns here)."""
    dated = [c for c in columns if schema[c].is_temporal()]
    yearly = [c for c in columns if schema[c].is_integer() and c.lower().strip("_") in YEARISH]
    pick = (dated or yearly)[:1]
    return pick[0] if pick else None


def _time_hint(schema: Any, columns: list[str], flag: str) -> str:
    pick = time_candidate(schema, columns)
    return f"; try {flag} {pick}" if pick else ""


def _distinct_notes(distinct: list[Measure], grain: Grain, current: Window, dims: list[str]) -> list[str]:
    """What a distinct count over a window is here, and what its segment table means: each segment
    is counted on its own, so a value in two segments is in both and segment changes need not add
    up to the total's."""
    notes = []
    for m in distinct:
        what = m.text
        n = grain.covers(current.start, current.end)
        if m.kind == "count_distinct_daily" and n > 1:
            notes.append(
                f"{what} over a window of {grain.count(n)} is the sum of each {grain.name}'s distinct count "
                f"(a value seen on three {grain.name}s counts three times): activity, not the window's "
                f"distinct total; count_distinct({m.column}) counts the window's distinct values"
            )
        elif m.kind != "count_distinct_daily":
            approx = (
                " approximately (the engine's HyperLogLog estimate)" if m.kind != "count_distinct" else ""
            )
            notes.append(
                f"{what} is counted{approx} over each whole window by the engine: the distinct values in "
                "the window, in the baseline and in every earlier window of the history"
            )
    if distinct and dims:
        notes.append(
            "Segments of a distinct count are each counted on their own: a value in two segments (a user "
            "on two devices) is in both, so segment values and changes need not add up to the total's; "
            "each segment's share is its own change over the total's change"
        )
    return notes


def _unknown_metric(metric: str) -> str:
    """A metric name that is neither configured nor a column: the nearest configured names."""
    known = sorted(load_metrics())
    close = difflib.get_close_matches(metric, known, n=1)
    hint = f": did you mean {close[0]!r}?" if close else "."
    return f"{metric!r} is no configured metric either{hint} Configured metrics: {', '.join(known) or 'none'}"
