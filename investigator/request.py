"""The question: what the user asked for, parsed once, before any data is read.

A `Request` is what a run stores and what `resume` replays; everything in it is checked here for
its form (a window like `7d`, an end date, a known baseline, a metric that parses), and against
the data in `sources.resolve`.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_serializer, model_validator

from investigator.analysis.grain import (
    BASELINES,
    SUFFIX,
    BaselineKind,
    WindowError,
    WindowUnit,
    month_end,
    parse_window,
)
from investigator.analysis.spec import Measure, parse_measure
from investigator.config import MetricDefinition, load_metrics
from investigator.errors import UserError

BASELINE_NAMES = "previous, wow, yoy, mom, qoq"
_END = re.compile(r"^\s*(\d{4})(?:-?(?:(\d{1,2})|[Qq]([1-4])))?\s*$")


class Span(BaseModel, frozen=True):
    """A window's length: `n` periods of `unit`, kept with the text the user wrote.

    Parsed once, where the question is asked; stored (in checkpoints, triage configs) as that
    text, so a saved run reads back the same.
    """

    n: int
    unit: WindowUnit
    text: str

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                n, unit = parse_window(value)
            except WindowError as e:
                raise ValueError(str(e)) from None
            return {"n": n, "unit": unit, "text": value.strip()}
        return value

    @model_serializer
    def _to_text(self) -> str:
        return self.text

    @classmethod
    def of(cls, text: str) -> Span:
        """The span `text` names; a `UserError` that shows the windows one can write otherwise."""
        try:
            n, unit = parse_window(text)
        except WindowError as e:
            raise UserError(str(e)) from None
        return cls(n=n, unit=unit, text=text.strip())

    def __str__(self) -> str:
        return self.text

    @property
    def short(self) -> str:
        """The canonical form, e.g. `3mo` for `3 months`."""
        return f"{self.n}{SUFFIX[self.unit]}"


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
    window: Span = Field(default_factory=lambda: Span.of("7d"))
    end: date | None = None
    baseline: BaselineKind = "previous"
    time_column: str | None = None
    dimensions: list[str] | None = None
    keep_dimensions: list[str] = Field(
        default_factory=list, description="dimensions kept even when their values look like identifiers"
    )
    objective: str | None = None
    filter: str | None = Field(
        None,
        description="the rows the run keeps: a segment (region=EU, several joined with , or &) or a "
        "boolean SQL expression over the table's columns; checked against the data in sources.filters",
    )


_PLAIN = re.compile(r"^[^=,&<>!;'\"()]+$")


def segment_text(segment: dict[str, Any]) -> str:
    """The `--filter` text naming one segment (what triage flags): `region=EU,device=ios`, or, when
    a value holds a character that form cannot, the same comparison as text in SQL."""
    plain = [str(x) for pair in segment.items() for x in pair]
    if all(_PLAIN.match(x) and x == x.strip() for x in plain):
        return ",".join(f"{c}={v}" for c, v in segment.items())
    quoted = (
        "CAST(\"{}\" AS VARCHAR) = '{}'".format(c.replace('"', '""'), str(v).replace("'", "''"))
        for c, v in segment.items()
    )
    return " AND ".join(quoted)


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
    """The two sides of `a/b` (the second None for a plain measure), as text."""
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


def build_request(
    metric: str | None,
    data: str | None,
    window: str | Span,
    end: str | date | None,
    baseline: str,
    time_column: str | None,
    dimensions: list[str] | str | None,
    objective: str | None,
    flag: str = "",
    table: str | None = None,
    sql: str | None = None,
    keep_dimensions: list[str] | str | None = None,
    filter: str | dict[str, Any] | None = None,
) -> Request:
    """A request from flag-like values (CLI or keyword arguments), with one message per mistake;
    `flag` prefixes the names in messages ("--" for the command line). `filter` is the `--filter`
    text, or a segment as a dict ({"region": "EU"}: the rows of a segment triage flagged)."""
    if not metric:
        raise UserError(f"{flag}metric is required, e.g. {flag}metric revenue or {flag}metric revenue/orders")
    if baseline not in BASELINES:
        raise UserError(f"{flag}baseline {baseline!r} is not one of {BASELINE_NAMES}")
    span = Span.of(window) if isinstance(window, str) else window
    end_day = parse_end(end, flag) if isinstance(end, str) else end
    if isinstance(dimensions, str):
        dimensions = [d.strip() for d in dimensions.split(",") if d.strip()]
    if isinstance(keep_dimensions, str):
        keep_dimensions = [d.strip() for d in keep_dimensions.split(",") if d.strip()]
    if isinstance(filter, dict):
        filter = segment_text(filter)
    fields: dict[str, Any] = {
        "metric": metric, "data": data, "window": span, "end": end_day, "baseline": baseline,
        "time_column": time_column, "dimensions": dimensions or None, "objective": objective,
        "table": table or None, "sql": sql or None, "keep_dimensions": keep_dimensions or [],
        "filter": (filter or "").strip() or None,
    }  # fmt: skip
    try:
        return Request.model_validate(fields)
    except ValidationError as e:
        raise UserError(f"invalid arguments: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
