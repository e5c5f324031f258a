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


_CALL = re.compile(r"^([a-z_]+)\s*\(\s*([^()]*?)\s*\)$", re.IGNORECASE)
MeasureKind = Literal["sum", "count", "count_distinct", "count_distinct_daily", "approx_count_distinct"]
DISTINCT_KINDS = ("count_distinct", "count_distinct_daily", "approx_count_distinct")
FORMS = (
    "a column, sum(col), count(*), count(col), count_distinct(col), count_distinct_daily(col), "
    "approx_count_distinct(col) or avg(col), or a ratio of two of them"
)
_REFUSED = {
    "min": "a minimum is one row's value, not a total of segments: no segment's share of its change "
    "can be measured; investigate the rows below a threshold instead, e.g. count({c}) with "
    '--filter "{c} < 10"',
    "max": "a maximum is one row's value, not a total of segments: no segment's share of its change "
    "can be measured; investigate the rows above a threshold instead, e.g. count({c}) with "
    '--filter "{c} > 100"',
    "mean": "write avg({c}): the mean of the non-null values, sum({c})/count({c})",
    "average": "write avg({c}): the mean of the non-null values, sum({c})/count({c})",
    "median": "a median is no total of segments; try avg({c}) (sum({c})/count({c})) or count({c}) "
    "with a --filter",
    "nunique": "write count_distinct({c})",
    "distinct": "write count_distinct({c})",
    "countdistinct": "write count_distinct({c})",
    "count_unique": "write count_distinct({c})",
    "approx_distinct": "write approx_count_distinct({c})",
    "approx_nunique": "write approx_count_distinct({c})",
    "avg": "an average inside a ratio is a ratio of ratios; investigate avg({c}) on its own "
    "(sum({c})/count({c}), with its mix and rate)",
}


class Measure(BaseModel):
    """One side of a metric: a column summed, rows counted, or distinct values counted.

    Sums and counts add up over segments and days. Distinct counts do not, and come in three forms:
    `count_distinct(col)` counts the distinct values over each whole window, in the engine (weekly
    active users over a 7-day window); `count_distinct_daily(col)` adds each day's distinct count
    over the window (user-days: a user active on three days counts three times);
    `approx_count_distinct(col)` is the engine's approximate (HyperLogLog) distinct count over the
    window, only when asked for by that name, and labelled so in every output.
    """

    kind: MeasureKind = "sum"
    column: str | None = Field(None, description="None for count(*)")

    @property
    def name(self) -> str:
        """The measure's column in every frame the analysis builds."""
        if self.kind == "sum":
            return self.column or ""
        if self.kind == "count":
            return f"count_{self.column}" if self.column else "count"
        prefix = {"count_distinct": "distinct", "count_distinct_daily": "distinct_daily"}
        return f"{prefix.get(self.kind, 'approx_distinct')}_{self.column}"

    @property
    def additive(self) -> bool:
        """Whether segments' values add up to the total's (sums and counts, not distinct counts)."""
        return self.kind not in DISTINCT_KINDS

    @property
    def windowed(self) -> bool:
        """Whether a window's value is counted over the whole window (not added up over its days)."""
        return self.kind in ("count_distinct", "approx_count_distinct")

    @property
    def text(self) -> str:
        """The measure as the user writes it."""
        if self.kind == "sum":
            return f"sum({self.column})"
        return f"{self.kind}({self.column or '*'})"


def parse_measure(text: str) -> Measure:
    """`revenue`, `sum(revenue)`, `count(*)` (or `count`), `count(col)`, `count_distinct(col)`,
    `count_distinct_daily(col)`, `approx_count_distinct(col)`. A form that is refused says why
    and names the nearest one that works."""
    text = text.strip()
    if text.lower() in ("count", "count(*)", "count( * )"):
        return Measure(kind="count")
    m = _CALL.match(text)
    if m is None:
        if not text or any(c in text for c in "()*/"):
            raise ValueError(f"{text!r} is not {FORMS}")
        return Measure(column=text)
    kind, column = m.group(1).lower(), m.group(2)
    if kind in _REFUSED:
        raise ValueError(f"{text!r} is not supported: {_REFUSED[kind].format(c=column or 'col')}")
    if kind not in ("sum", "count", *DISTINCT_KINDS):
        raise ValueError(f"{text!r}: {kind}() is not a measure; use {FORMS}")
    if column in ("", "*"):
        if kind != "count":
            raise ValueError(f"{text!r} needs a column: {kind}(col)")
        return Measure(kind="count")
    return Measure(kind=kind, column=column)


_AVG = re.compile(r"^\s*avg\s*\(\s*([^()*/]+?)\s*\)\s*$", re.IGNORECASE)


def average_of(text: str) -> str | None:
    """The column of `avg(col)`, else None: an average is investigated as the ratio it is,
    sum(col)/count(col) (the mean of the non-null values), so its change splits into mix and rate."""
    m = _AVG.match(text)
    return m.group(1) if m else None


class Driver(BaseModel):
    """One factor of a metric's driver tree: a named metric of sums and counts (`sessions`, or
    `conversion` = orders/sessions), multiplied in (`power` 1) or divided by (-1)."""

    name: str
    numerator: Measure
    denominator: Measure | None = None
    power: Literal[1, -1] = 1


_TREE = re.compile(r"^\s*[A-Za-z_][\w.]*(\s*[*/]\s*[A-Za-z_][\w.]*)+\s*$")


def parse_tree(text: str) -> list[tuple[str, int]]:
    """`sessions * conversion * aov` -> [(sessions, 1), (conversion, 1), (aov, 1)]: named metrics
    multiplied or divided, at least two; a ValueError says what is wrong."""
    if not _TREE.match(text):
        raise ValueError(
            f"{text!r} is not a driver tree: write named metrics multiplied or divided, e.g. "
            "sessions * conversion * aov"
        )
    names = re.split(r"\s*([*/])\s*", text.strip())
    ops = zip(names[1::2], names[2::2], strict=True)
    out = [(names[0], 1)] + [(n, 1 if op == "*" else -1) for op, n in ops]
    twice = sorted({n for n, _ in out if [m for m, _ in out].count(n) > 1})
    if twice:
        raise ValueError(f"{text!r} names {twice[0]!r} twice")
    return out


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
    drivers: list[Driver] = Field(
        default_factory=list, description="the metric's driver tree: factors whose product is the metric"
    )

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
    def windowed(self) -> dict[str, Measure]:
        """The measures counted over each whole window (`count_distinct`, `approx_count_distinct`):
        no per-period value adds up to them, so every window's value is its own engine count."""
        return {n: m for n, m in self.computed.items() if m.windowed}

    @property
    def approximate(self) -> bool:
        """Whether a measure is the engine's approximate distinct count (labelled in every output)."""
        return any(m.kind == "approx_count_distinct" for m in self.computed.values())

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

    def tiles(self, w: Window) -> list[Window]:
        """`w` cut into windows of the current window's length (in `window_grain` periods), the
        latest first: how a distinct count over a longer baseline (`avg4`) is counted, one whole
        window at a time (a count over 28 days is not four weeks' counts). A ValueError when `w`
        is no whole number of such windows."""
        g, length = self.window_grain, self.window_periods
        n = g.covers(w.start, w.end)
        if n % length:
            raise ValueError(
                f"a distinct count compares windows of one length: the baseline {w.start}..{w.end} is "
                f"{g.count(n)} and the window {g.count(length)}; use a baseline of whole windows "
                "(previous, wow, yoy, avgN)"
            )
        last = g.index(w.end)
        return [
            Window(start=g.at(last - (k + 1) * length + 1), end=g.end(g.at(last - k * length)))
            for k in range(n // length)
        ]

    def scaled(self, baseline_sum: float) -> float:
        """A baseline window's value as compared: a sum scaled by `baseline_scale`, a ratio as is."""
        return baseline_sum if self.is_ratio else baseline_sum * self.baseline_scale

    def count_label(self, n: int) -> str:
        """`n` of the data's periods in words: "120 days", "63 months"."""
        return self.periods.count(n)


def _whole_months(w: Window) -> bool:
    return w.start.day == 1 and (w.end + timedelta(days=1)).day == 1
