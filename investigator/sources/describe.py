"""What a data set can be asked: its columns, the time column and grain a run would pick, its dates,
the dimensions a run would localize with their number of values, and the configured metrics.

`investigate mcp`'s `describe_data` answers with this, so an assistant can ask a valid question
before it asks one. Every choice is the run's own code (`sources.resolve`, `sources.windows`), not a
second guess: a description that picked another time column or other dimensions than the run would
send the assistant into the errors it is meant to avoid. Only aggregates are read (counts, distinct
dates, distinct values per column); the data's location is shown without its password.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from investigator.analysis.reading import user_columns
from investigator.config import MetricDefinition, load_metrics
from investigator.errors import DataError, UserError
from investigator.request import Span, metric_definition, parse_end, parse_metric
from investigator.sources import source_for
from investigator.sources.demo import demo_path
from investigator.sources.resolve import text_columns, time_candidate
from investigator.sources.urls import redact
from investigator.sources.windows import distinct_dates, plan

__all__ = ["Column", "DataDescription", "Dimension", "MetricInfo", "WindowPlan", "describe_data"]

MAX_DIMENSIONS = 50  # distinct counts asked for at most this many columns (one query)


class Column(BaseModel):
    name: str
    type: str = Field(description="the engine's type, e.g. string, int64, float64, date")


class Dimension(BaseModel):
    name: str
    values: int = Field(description="distinct non-null values over the whole data")


class MetricInfo(BaseModel):
    """A metric configured in `metrics.yaml`: ask for it by name."""

    name: str
    expression: str
    description: str = ""
    dimensions: list[str] | None = None
    time_column: str | None = None
    data: str | None = Field(None, description="its own data (a URL without its password), if any")


class WindowPlan(BaseModel):
    """The windows a run with this window and baseline would compare, or why it would refuse."""

    window: str
    baseline: str
    current_start: date | None = None
    current_end: date | None = None
    baseline_start: date | None = None
    baseline_end: date | None = None
    problem: str | None = Field(None, description="the run's own message when it would refuse")


class DataDescription(BaseModel):
    """What an assistant needs to ask a valid question of this data."""

    data: str = Field(description="where the data is (a URL without its password)")
    rows: int
    columns: list[Column]
    time_column: str | None = Field(
        description="the date column to ask with; None: none found. Pass it as time_column when a run "
        "would not find it by itself (time_column_given false)"
    )
    time_column_given: bool = Field(
        True, description="false: the run looks for 'date' (or the metric's); name this one to use it"
    )
    grain: str | None = Field(None, description="the data's period: day, week, month, quarter, year")
    grain_step: int | None = Field(None, description="periods per step (5 for data every 5 years)")
    first_date: date | None = None
    last_date: date | None = None
    suggested_window: str | None = Field(None, description="the shortest window the grain answers")
    windows: WindowPlan | None = None
    dimensions: list[Dimension] = Field(
        default_factory=list,
        description="the columns a run localizes when none are named (the metric's configured ones, "
        "else the text and boolean columns)",
    )
    numeric_columns: list[str] = Field(default_factory=list, description="columns a metric may sum")
    metrics: list[MetricInfo] = Field(default_factory=list, description="configured metrics")
    notes: list[str] = Field(default_factory=list, description="how the data was read")


def describe_data(
    data: str | None = None,
    table: str | None = None,
    sql: str | None = None,
    metric: str | None = None,
    time_column: str | None = None,
    window: str | None = None,
    baseline: str = "previous",
    end: str | None = None,
    by_owner: bool = False,
) -> DataDescription:
    """Describe `data` (a file, a URL or `env:VAR`; default: `metric`'s configured data, else the
    demo) as a run with these arguments would read it. `by_owner`: the process owner asks
    (a query of theirs may read their files; a client's over HTTP, or a definition's, may not)."""
    definition = metric_definition(metric) if metric else MetricDefinition(expression="count(*)")
    where = str(data or definition.data or demo_path())
    own = by_owner and (bool(sql) or not definition.sql)  # a definition's query is never the owner's
    source = source_for(where, table or definition.table, sql or definition.sql, own=own)
    asked = time_column or definition.time_column or "date"
    try:
        opened = source.open(asked)
        schema = opened.schema()
        columns = user_columns(schema.names)
        picked = asked if asked in columns else time_candidate(schema, columns)
        if picked is not None and picked != asked:  # typed as dates the way a run would
            opened = source.open(picked)
            schema = opened.schema()
        measured: set[str] = set()
        if metric:
            num, den = parse_metric(definition.expression)
            measured = {m.column for m in (num, den) if m is not None and m.column}
        configured = [d for d in definition.dimensions or [] if d in columns]
        dims = (configured or text_columns(schema, picked or "", measured))[:MAX_DIMENSIONS]
        counts = opened.aggregate(
            rows=opened.count(), **{f"d{i}": opened[c].nunique() for i, c in enumerate(dims)}
        ).to_pandas()
        described = DataDescription(
            data=redact(where),
            rows=int(counts["rows"].iloc[0]),
            columns=[Column(name=c, type=str(schema[c])) for c in columns],
            time_column=picked if picked is not None and schema[picked].is_date() else None,
            time_column_given=picked == asked,
            dimensions=[Dimension(name=c, values=int(counts[f"d{i}"].iloc[0])) for i, c in enumerate(dims)],
            numeric_columns=[c for c in columns if schema[c].is_numeric() and c != picked],
            metrics=_metrics(),
            notes=list(source.notes),
        )
        if described.time_column is None:
            return described
        return _dated(described, distinct_dates(opened, described.time_column), window, baseline, end)
    finally:
        source.close()


def _dated(
    d: DataDescription, dates: list[date], window: str | None, baseline: str, end: str | None
) -> DataDescription:
    """The grain, the range and the windows a run would pick, from the data's distinct dates."""
    if not dates:
        return d.model_copy(update={"notes": [*d.notes, "the time column holds no dates"]})
    from investigator.analysis.grain import detect_grain

    grain = detect_grain(dates)
    asked = window or grain.suggested_window
    windows = WindowPlan(window=asked, baseline=baseline)
    try:
        w = plan(dates, Span.of(asked), baseline, parse_end(end, "") if end else None, flag="")
        windows = windows.model_copy(
            update={
                "current_start": w.current.start,
                "current_end": w.current.end,
                "baseline_start": w.baseline.start,
                "baseline_end": w.baseline.end,
            }
        )
    except (DataError, UserError) as e:  # what the run would say: the assistant reads it first
        windows = windows.model_copy(update={"problem": str(e)})
    return d.model_copy(
        update={
            "grain": grain.unit,
            "grain_step": grain.step,
            "first_date": dates[0],
            "last_date": dates[-1],
            "suggested_window": grain.suggested_window,
            "windows": windows,
        }
    )


def _metrics() -> list[MetricInfo]:
    return [
        MetricInfo(
            name=name,
            expression=m.expression,
            description=m.description,
            dimensions=m.dimensions,
            time_column=m.time_column,
            data=redact(m.data) if m.data else None,
        )
        for name, m in load_metrics().items()
    ]
