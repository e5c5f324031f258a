"""What an analysis is about: the metric, its dimensions and the two periods compared.

This model crosses the host/kernel boundary as JSON, so it holds only plain values.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Literal

from pydantic import BaseModel, Field

from .grain import Grain, GrainUnit


class Window(BaseModel):
    """An inclusive range of days; at a coarser grain, of whole periods (2024-03-01..2024-03-31)."""

    start: date
    end: date

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def shifted(self, days: int) -> Window:
        return Window(start=self.start - timedelta(days=days), end=self.end - timedelta(days=days))


_CALL = re.compile(r"^(sum|count|count_distinct)\s*\(\s*([^()]*?)\s*\)$", re.IGNORECASE)


class Measure(BaseModel):
    """One side of a metric: a column summed, rows counted, or distinct values counted.

    Sums and counts add up over segments and days. A distinct count does not: it is counted by the
    engine per day, for the whole data and per segment, and only those counts are ever added (over
    the days of a window, so a window's value is the sum of its daily counts, e.g. user-days).
    """

    kind: Literal["sum", "count", "count_distinct"] = "sum"
    column: str | None = Field(None, description="None for count(*)")

    @property
    def name(self) -> str:
        """The measure's column in every frame the analysis builds."""
        if self.kind == "sum":
            return self.column or ""
        if self.kind == "count":
            return f"count_{self.column}" if self.column else "count"
        return f"distinct_{self.column}"

    @property
    def additive(self) -> bool:
        return self.kind != "count_distinct"


def parse_measure(text: str) -> Measure:
    """`revenue`, `sum(revenue)`, `count(*)` (or `count`), `count(col)`, `count_distinct(col)`."""
    text = text.strip()
    if text.lower() in ("count", "count(*)", "count( * )"):
        return Measure(kind="count")
    m = _CALL.match(text)
    if m is None:
        if not text or any(c in text for c in "()*/"):
            raise ValueError(
                f"{text!r} is not a column, sum(col), count(*), count(col) or count_distinct(col)"
            )
        return Measure(column=text)
    kind, column = m.group(1).lower(), m.group(2)
    if column in ("", "*"):
        if kind != "count":
            raise ValueError(f"{text!r} needs a column: {kind}(col)")
        return Measure(kind="count")
    return Measure(kind=kind, column=column)


class RowFilter(BaseModel, frozen=True):
    """The rows a run keeps (`--filter`), as data: `column = value` pairs compared as text, or a
    boolean SQL expression checked and re-rendered by sqlglot. Whoever opens the data rebuilds the
    filter from these fields (`reading.filtered`); it is never run as code."""

    text: str = Field(description="the filter as the user wrote it")
    segment: list[tuple[str, str]] = Field(
        default_factory=list, description="(column, value) pairs, all must hold; values compared as text"
    )
    sql: str | None = Field(None, description="a boolean expression over the table's columns, re-rendered")
    dialect: str | None = Field(None, description="the sqlglot dialect `sql` is written in")

    @property
    def described(self) -> str:
        """The filter in words: `region = EU and device = ios`, or the SQL expression."""
        return " and ".join(f"{c} = {v}" for c, v in self.segment) or self.sql or self.text


class AnalysisSpec(BaseModel):
    """A metric (a summed column, or a ratio of two summed columns) compared over two windows."""

    metric: str = Field(description="display name, e.g. 'revenue' or 'aov'")
    numerator: str
    denominator: str | None = None
    time_column: str = "date"
    dimensions: list[str] = Field(default_factory=list)
    current: Window
    baseline: Window
    baseline_kind: str = "previous"
    grain: GrainUnit = Field("day", description="the data's period: one row per day, week, month, ...")
    grain_step: int = Field(1, ge=1, description="units per period: 5 at year grain for data every 5 years")
    computed: dict[str, Measure] = Field(
        default_factory=dict,
        description="measures that are not a column summed (counts, distinct counts), by their name",
    )
    filter: RowFilter | None = Field(None, description="the rows the run keeps; None: every row")
    notes: list[str] = Field(
        default_factory=list,
        description="how the input was read, for the report: columns left out, units and zones assumed",
    )
    data_last: date | None = Field(None, description="the data's last date: where late rows are missing")

    @property
    def is_ratio(self) -> bool:
        return self.denominator is not None

    @property
    def measures(self) -> list[str]:
        return [self.numerator] + ([self.denominator] if self.denominator else [])

    @property
    def distinct(self) -> dict[str, str]:
        """The distinct-count measures: name -> the column whose values are counted."""
        return {n: m.column or "" for n, m in self.computed.items() if not m.additive}

    @property
    def additive(self) -> bool:
        """Whether every measure adds up over segments (no distinct count)."""
        return not self.distinct

    @property
    def baseline_offset(self) -> int:
        """Days between the baseline window and the current window."""
        return (self.current.end - self.baseline.end).days

    @property
    def periods(self) -> Grain:
        """The data's periods, on the grid the current window starts on."""
        return Grain(self.grain, self.grain_step, self.current.start)

    @property
    def window_grain(self) -> Grain:
        """The periods the windows are counted in: the data's, or calendar months for windows of
        whole months on daily data (`--window 1mo`)."""
        if self.grain == "day" and all(_whole_months(w) for w in (self.current, self.baseline)):
            return Grain("month", 1, self.current.start)
        return self.periods

    @property
    def window_periods(self) -> int:
        """The length of each window, in `window_grain` periods."""
        return self.window_grain.covers(self.current.start, self.current.end)

    @property
    def baseline_lag(self) -> int:
        """How many `window_grain` periods the baseline's end lies before the current window's."""
        g = self.window_grain
        return g.index(self.current.end) - g.index(self.baseline.end)

    @property
    def baseline_periods(self) -> int:
        """The baseline's length in `window_grain` periods (days when those are days)."""
        return self.window_grain.covers(self.baseline.start, self.baseline.end)

    @property
    def baseline_scale(self) -> float:
        """What the baseline's sums are multiplied by to compare with the current window: 1 for
        windows of equal length; otherwise the current window's length over the baseline's, so the
        metric is compared per period (`avg4`: 1/4, the mean of the four windows before). Every
        baseline number (the movement, its history, segments, the cube, the cause check) is
        scaled by it; a ratio's numerator and denominator alike, which leaves the ratio as is."""
        cur, base = self.window_periods, self.baseline_periods
        return 1.0 if cur == base else cur / base

    @property
    def baseline_words(self) -> str:
        """How the baseline is compared, when its length differs from the window's ("" otherwise):
        what the report's movement says of it."""
        cur, base = self.window_periods, self.baseline_periods
        if cur == base:
            return ""
        g = self.window_grain
        n = self.baseline_windows
        if n is not None:
            return (
                f"the mean of the {n} windows of {g.count(cur)} before ({self.baseline.start} to "
                f"{self.baseline.end}): the baseline's sums are divided by {n}"
            )
        return (
            f"per {g.name}: the baseline ({self.baseline.start} to {self.baseline.end}) is {g.count(base)} "
            f"and the window {g.count(cur)}, so the baseline's sums are scaled by {cur}/{base}"
        )

    @property
    def baseline_windows(self) -> int | None:
        """N when the baseline is the N (2 or more) windows right before the current one (`avgN`)."""
        cur, base = self.window_periods, self.baseline_periods
        right_before = self.current.start - self.baseline.end == timedelta(days=1)
        return base // cur if base > cur and base % cur == 0 and right_before else None

    def scaled(self, baseline_sum: float) -> float:
        """A baseline window's value as compared: a sum scaled by `baseline_scale`, a ratio as is."""
        return baseline_sum if self.is_ratio else baseline_sum * self.baseline_scale

    def count_label(self, n: int) -> str:
        """`n` of the data's periods in words: "120 days", "63 months"."""
        return self.periods.count(n)


def _whole_months(w: Window) -> bool:
    return w.start.day == 1 and (w.end + timedelta(days=1)).day == 1
