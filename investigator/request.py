"""The question: what the user asked for, parsed once, before any data is read.

A `Request` is what a run stores and what `resume` replays; everything in it is checked here for
its form (a window like `7d`, an end date, a known baseline, a metric that parses), and against
the data in `sources.resolve`.
"""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    model_serializer,
    model_validator,
)

from investigator.analysis.grain import (
    SUFFIX,
    BaselineKind,
    WindowError,
    WindowUnit,
    month_end,
    parse_window,
)
from investigator.analysis.ranges import avg_count, check_baseline, is_range, parse_range, range_text
from investigator.analysis.spec import Measure, average_of, parse_measure
from investigator.config import MetricDefinition, load_metrics
from investigator.errors import UserError
from investigator.limits import check_lengths, too_deep

BASELINE_NAMES = "previous, wow, yoy, mom, qoq, avgN (e.g. avg4) or a range of days"
_END = re.compile(r"^\s*(\d{4})(?:-?(?:(\d{1,2})|[Qq]([1-4])))?\s*$")


class Span(BaseModel, frozen=True):
    """A window's length: `n` periods of `unit`, kept with the text the user wrote; or an explicit
    range of days (`2026-03-01..2026-03-07`: `start` and `end` set, `n` its days).

    Parsed once, where the question is asked; stored (in checkpoints, triage configs) as that
    text, so a saved run reads back the same.
    """

    n: int
    unit: WindowUnit
    text: str
    start: date | None = None
    end: date | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return _span_fields(value)
            except WindowError as e:
                raise ValueError(str(e)) from None
        return value

    @model_serializer
    def _to_text(self) -> str:
        return self.text

    @classmethod
    def of(cls, text: str) -> Span:
        """The span `text` names; a `UserError` that shows the windows one can write otherwise."""
        try:
            return cls(**_span_fields(text))
        except WindowError as e:
            raise UserError(str(e)) from None

    def __str__(self) -> str:
        return self.text

    @property
    def short(self) -> str:
        """The canonical form, e.g. `3mo` for `3 months` (a range: as written, `a..b`)."""
        return self.text if self.is_range else f"{self.n}{SUFFIX[self.unit]}"

    @property
    def is_range(self) -> bool:
        """An explicit range of days rather than a length."""
        return self.start is not None


def _span_fields(text: str, flag: str = "") -> dict[str, Any]:
    """A span's fields from its text: a length (`7d`) or a range of days; a `WindowError` otherwise
    (`flag` prefixes the option's name in it)."""
    if is_range(text):
        start, end = parse_range(text, f"{flag}window")
        return {"n": (end - start).days + 1, "unit": "day", "text": range_text(start, end), "start": start,
                "end": end}  # fmt: skip
    n, unit = parse_window(text)
    return {"n": n, "unit": unit, "text": text.strip()}


class Baseline(BaseModel, frozen=True):
    """What the window is compared with: a named baseline (`previous`, `wow`, `mom`, `qoq`, `yoy`),
    the mean of the N windows before (`avgN`: `kind` "avg", `n` set) or a range of days (`kind`
    "range", `start` and `end` set).

    Parsed once, where the question is asked (`Baseline.of`); stored as its text, so a saved run
    and a triage config read back the same."""

    kind: BaselineKind | Literal["avg", "range"]
    text: str
    n: int | None = None
    start: date | None = None
    end: date | None = None

    @model_validator(mode="before")
    @classmethod
    def _from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                return _baseline_fields(value, "")
            except WindowError as e:
                raise ValueError(str(e)) from None
        return value

    @model_serializer
    def _to_text(self) -> str:
        return self.text

    @classmethod
    def of(cls, text: str | Baseline, flag: str = "--") -> Baseline:
        """The baseline `text` names; a `UserError` that says what to write otherwise (`flag`
        prefixes the option's name in it)."""
        if isinstance(text, Baseline):
            return text
        try:
            return cls(**_baseline_fields(text, flag))
        except WindowError as e:
            raise UserError(str(e)) from None

    def __str__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        """Equal to another baseline of the same text, or to that text itself (`== "yoy"`)."""
        if isinstance(other, str):
            return self.text == other
        return isinstance(other, Baseline) and self.text == other.text

    def __hash__(self) -> int:
        return hash(self.text)


def _baseline_fields(text: str, flag: str) -> dict[str, Any]:
    written = check_baseline(text, flag)
    if is_range(written):
        start, end = parse_range(written, f"{flag}baseline")
        return {"kind": "range", "text": written, "start": start, "end": end}
    n = avg_count(written)
    if n is not None:
        return {"kind": "avg", "text": written, "n": n}
    return {"kind": written, "text": written}


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
    by_owner: bool = Field(
        False,
        description="asked by the process owner (CLI, notebook, MCP over stdio): their --sql may read "
        "their files; any other query (an HTTP client's, a config's) reads only the connection's tables",
    )
    window: Span = Field(default_factory=lambda: Span.of("7d"))
    end: date | None = None
    baseline: Baseline = Field(
        default_factory=lambda: Baseline.of("previous"),
        description="previous, wow, mom, qoq, yoy, avgN (the mean of the N windows before) or a range "
        "of days (2026-02-01..2026-02-07)",
    )
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
    semantic_manifest: str | None = Field(
        None,
        description="a dbt semantic manifest (or a dbt project folder) that defines `metric`; its "
        "filter is in `filter` already",
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


def span_of(text: str, flag: str = "--") -> Span:
    """`Span.of`, with the option named as the caller writes it (`--window` or `window`)."""
    try:
        return Span(**_span_fields(text, flag))
    except WindowError as e:
        message = str(e)
        raise UserError(message if message.startswith(flag) else flag + message) from None


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
    """The metric's measures: one, or the two sides of a ratio (`sum(revenue)/count_distinct(user_id)`).
    `avg(col)` is the ratio it is: sum(col)/count(col), the mean of the non-null values."""
    column = average_of(expression)
    if column is not None:
        return Measure(column=column), Measure(kind="count", column=column)
    num, den = parse_expression(expression)
    try:
        return parse_measure(num), parse_measure(den) if den else None
    except ValueError as e:
        raise UserError(f"metric {expression!r}: {e}") from None


def metric_definition(metric: str, semantic_manifest: str | None = None) -> MetricDefinition:
    """The metric as a dbt semantic manifest or `metrics.yaml` defines it, else the name read as a
    measure or a ratio."""
    if semantic_manifest is not None:
        from investigator.semantic import semantic_metric

        return semantic_metric(semantic_manifest, metric).definition
    known = load_metrics().get(metric)
    if known is not None:
        return known
    parse_metric(metric)  # a UserError that says what is wrong with it
    return MetricDefinition(expression=metric)


def named_metrics(semantic_manifest: str | None = None) -> dict[str, MetricDefinition]:
    """The named metrics a driver tree's nodes are looked up in: the dbt semantic manifest's when
    the question names one, else `metrics.yaml`'s."""
    if semantic_manifest is not None:
        from investigator.semantic import semantic_definitions

        return semantic_definitions(semantic_manifest)
    return load_metrics()


def build_request(
    metric: str | None,
    data: str | None,
    window: str | Span,
    end: str | date | None,
    baseline: str | Baseline,
    time_column: str | None,
    dimensions: list[str] | str | None,
    objective: str | None,
    flag: str = "",
    table: str | None = None,
    sql: str | None = None,
    keep_dimensions: list[str] | str | None = None,
    filter: str | dict[str, Any] | None = None,
    semantic_manifest: str | None = None,
    by_owner: bool = False,
) -> Request:
    """A request from flag-like values (CLI or keyword arguments), with one message per mistake;
    `flag` prefixes the names in messages ("--" for the command line). `filter` is the `--filter`
    text, or a segment as a dict ({"region": "EU"}: the rows of a segment triage flagged)."""
    if not metric:
        raise UserError(f"{flag}metric is required, e.g. {flag}metric revenue or {flag}metric revenue/orders")
    check_lengths(
        {"metric": metric, "data": data, "table": table, "sql": sql, "time_column": time_column,
         "baseline": str(baseline), "objective": objective, "dimensions": dimensions,
         "keep_dimensions": keep_dimensions},
        flag,
    )  # fmt: skip
    compared = Baseline.of(baseline, flag)
    span = span_of(window, flag) if isinstance(window, str) else window
    end_day = parse_end(end, flag) if isinstance(end, str) else end
    if span.is_range and end_day is not None:
        raise UserError(
            f"{flag}end {end_day} with {flag}window {span.text}: the range says where the window ends; "
            f"drop {flag}end, or write {flag}window {span.n}d {flag}end {span.end}"
        )
    if isinstance(dimensions, str):
        dimensions = [d.strip() for d in dimensions.split(",") if d.strip()]
    if isinstance(keep_dimensions, str):
        keep_dimensions = [d.strip() for d in keep_dimensions.split(",") if d.strip()]
    if isinstance(filter, dict):
        filter = segment_text(filter)
    if semantic_manifest:  # the metric's own filter, and the user's, both hold
        from investigator.semantic import semantic_metric

        semantic = semantic_metric(semantic_manifest, metric)
        kept = semantic.filter
        both = [f for f in (kept, filter) if f]
        filter = " AND ".join(f"({f})" for f in both) if len(both) > 1 else filter or kept
        if data and ("://" in data or data.startswith("env:")) and not (table or sql):
            table = semantic.table  # the semantic model's table, behind the warehouse's URL
    semantic_manifest = str(Path(semantic_manifest).expanduser().resolve()) if semantic_manifest else None
    for text, name in ((filter, "filter"), (sql, "sql")):
        if text and (refused := too_deep(text, f"{flag}{name}")) is not None:
            raise UserError(refused)
    fields: dict[str, Any] = {
        "metric": metric, "data": data, "window": span, "end": end_day, "baseline": compared,
        "time_column": time_column, "dimensions": dimensions or None, "objective": objective,
        "table": table or None, "sql": sql or None, "keep_dimensions": keep_dimensions or [],
        "filter": (filter or "").strip() or None, "semantic_manifest": semantic_manifest,
        "by_owner": by_owner,
    }  # fmt: skip
    try:
        return Request.model_validate(fields)
    except ValidationError as e:
        raise UserError(f"invalid arguments: {e.errors()[0]['loc']}: {e.errors()[0]['msg']}") from None
