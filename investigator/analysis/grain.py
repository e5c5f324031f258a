"""The time grain of a data set, and windows counted in the periods people use.

A grain is a unit (day, week, month, quarter, year) times a step (5 at year grain for data every
five years) on a grid of periods through an anchor date. Detection reads only the distinct dates,
windows are whole periods, and baselines are aligned to the calendar at month grain and coarser.
Pure functions over dates: nothing here touches Ibis, pandas or the agent.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import pairwise
from typing import Literal

GrainUnit = Literal["day", "week", "month", "quarter", "year"]
WindowUnit = GrainUnit
BaselineKind = Literal["previous", "wow", "mom", "qoq", "yoy"]
BASELINES: tuple[BaselineKind, ...] = ("previous", "wow", "mom", "qoq", "yoy")
MONTHS: dict[str, int] = {"month": 1, "quarter": 3, "year": 12}
ADJECTIVE = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}
SUFFIX = {"day": "d", "week": "w", "month": "mo", "quarter": "q", "year": "y"}
_UNITS = {
    "d": "day", "day": "day", "days": "day",
    "w": "week", "wk": "week", "week": "week", "weeks": "week",
    "m": "month", "mo": "month", "mon": "month", "month": "month", "months": "month",
    "q": "quarter", "quarter": "quarter", "quarters": "quarter",
    "y": "year", "yr": "year", "year": "year", "years": "year",
}  # fmt: skip
_WINDOW = re.compile(r"^\s*(\d+)\s*([a-z]+)\s*$", re.IGNORECASE)
_DUPLICATE_TOLERANCE = 0.05  # share of periods allowed more than one date (a correction, a stray)


class WindowError(ValueError):
    """A window or baseline the data's grain cannot answer; the message says what to use instead."""


@dataclass(frozen=True)
class Grain:
    """Periods of `step` units on a grid through `anchor` (itself a period start)."""

    unit: GrainUnit = "day"
    step: int = 1
    anchor: date = date(2000, 1, 3)  # a Monday

    # naming -------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """One period, e.g. "month", "2-week period", "5-year period"."""
        return self.unit if self.step == 1 else f"{self.step}-{self.unit} period"

    @property
    def adjective(self) -> str:
        """How often the data comes: "monthly", "every 5 years"."""
        return ADJECTIVE[self.unit] if self.step == 1 else f"every {self.step} {self.unit}s"

    @property
    def suggested_window(self) -> str:
        """The shortest window the data can answer, as a flag value: "1mo", "5y"."""
        return "7d" if self.unit == "day" else f"{self.step}{SUFFIX[self.unit]}"

    def count(self, n: int) -> str:
        """ "1 month", "63 months", "3 5-year periods"."""
        return f"{n} {self.name}{'' if n == 1 else 's'}"

    def label(self, d: date) -> str:
        """The period containing `d` as people write it: 2024-03-29, 2024-03, 2024-Q1, 2024, 2020-2024."""
        s = self.start(d)
        if self.unit == "day" and self.step == 1:
            return s.isoformat()
        if self.unit in ("day", "week"):
            return f"week of {s.isoformat()}" if self.step == 1 else f"{s.isoformat()}..{self.end(s)}"
        if self.unit == "month" and self.step == 1:
            return f"{s.year}-{s.month:02d}"
        if self.unit == "quarter" and self.step == 1:
            return f"{s.year}-Q{(s.month - 1) // 3 + 1}"
        if self.unit == "year" and self.step == 1:
            return str(s.year)
        e = self.end(s)
        if self.unit == "year":
            return f"{s.year}-{e.year}"
        return f"{s.year}-{s.month:02d}..{e.year}-{e.month:02d}"

    # arithmetic ---------------------------------------------------------------------------------
    @property
    def days(self) -> int | None:
        """Days per period for day and week units; None for calendar units."""
        return {"day": 1, "week": 7}[self.unit] * self.step if self.unit in ("day", "week") else None

    @property
    def months(self) -> int | None:
        """Months per period for month, quarter and year units; None otherwise."""
        return MONTHS[self.unit] * self.step if self.unit in MONTHS else None

    def index(self, d: date) -> int:
        """The position of the period containing `d` on the grid (0 for the anchor's period)."""
        if self.days is not None:
            return (d - self.anchor).days // self.days
        assert self.months is not None
        return (_month_no(d) - _month_no(self.anchor)) // self.months

    def at(self, i: int) -> date:
        """The first day of period `i`."""
        if self.days is not None:
            return self.anchor + timedelta(days=i * self.days)
        assert self.months is not None
        return _month_start(_month_no(self.anchor) + i * self.months)

    def start(self, d: date) -> date:
        return self.at(self.index(d))

    def end(self, d: date) -> date:
        """The last day of the period containing `d`."""
        return self.at(self.index(d) + 1) - timedelta(days=1)

    def shift(self, d: date, n: int) -> date:
        """The start of the period `n` periods after the one containing `d`."""
        return self.at(self.index(d) + n)

    def window(self, end: date, periods: int) -> tuple[date, date]:
        """The `periods` whole periods ending with the one that contains `end`."""
        return self.shift(end, -(periods - 1)), self.end(end)

    def shift_window(self, start: date, end: date, n: int) -> tuple[date, date]:
        """A window of whole periods moved by `n` periods (negative: earlier)."""
        return self.shift(start, n), self.end(self.shift(end, n))

    def periods(self, start: date, end: date) -> list[date]:
        """Starts of the periods that begin inside [start, end]."""
        i, last = self.index(start), self.index(end)
        out = [self.at(k) for k in range(i, last + 1)]
        return [p for p in out if start <= p <= end]

    def covers(self, start: date, end: date) -> int:
        """How many periods [start, end] spans."""
        return self.index(end) - self.index(start) + 1

    def with_anchor(self, anchor: date) -> Grain:
        return Grain(self.unit, self.step, anchor)


def _month_no(d: date) -> int:
    return d.year * 12 + d.month - 1


def _month_start(n: int) -> date:
    return date(n // 12, n % 12 + 1, 1)


def month_end(d: date) -> date:
    return _month_start(_month_no(d) + 1) - timedelta(days=1)


# detection --------------------------------------------------------------------------------------
def _mode(values: Iterable[int]) -> int:
    counts = Counter(v for v in values if v > 0)
    if not counts:
        return 1
    top = max(counts.values())
    return min(v for v, c in counts.items() if c == top)


def _median(values: list[int]) -> float:
    s = sorted(values)
    n = len(s)
    return float(s[n // 2]) if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def detect_grain(dates: Iterable[date]) -> Grain:
    """The grain of a time column from its distinct dates.

    Yearly, quarterly or monthly when (nearly) every calendar period holds one date, with a step
    when the dates skip periods regularly (every 5 years); weekly when dates are 7 days (or a
    multiple) apart; daily otherwise (daily data, event timestamps cast to days, irregular dates).
    """
    days = sorted(set(dates))
    if len(days) < 2:
        return Grain("day", 1, days[0] if days else Grain().anchor)
    gaps = [(b - a).days for a, b in pairwise(days)]
    median_gap = _median(gaps)
    for unit, min_gap in (("year", 250), ("quarter", 60), ("month", 20)):
        if median_gap < min_gap:
            continue
        size = MONTHS[unit]
        keys = [_month_no(d) // size for d in days]
        distinct = sorted(set(keys))
        if len(days) - len(distinct) > _DUPLICATE_TOLERANCE * len(distinct):
            continue
        step = _mode(b - a for a, b in pairwise(distinct))
        phase = Counter(k % step for k in distinct).most_common(1)[0][0]
        first_key = distinct[0] - ((distinct[0] - phase) % step)
        return Grain(unit, step, _month_start(first_key * size))  # type: ignore[arg-type]
    weekly = [g for g in gaps if g % 7 == 0]
    if median_gap >= 6 and len(weekly) >= 0.9 * len(gaps):
        step = _mode(g // 7 for g in weekly)
        weekday = Counter(d.weekday() for d in days).most_common(1)[0][0]
        return Grain("week", step, days[0] - timedelta(days=(days[0].weekday() - weekday) % 7))
    return Grain("day", 1, days[0])


IntegerTime = Literal["year", "yyyymm", "yyyymmdd", "s", "ms", "us", "ns"]
EPOCH_UNITS = {"s": "seconds", "ms": "milliseconds", "us": "microseconds", "ns": "nanoseconds"}
_EPOCH_RANGES = {"s": 10**8, "ms": 10**11, "us": 10**14, "ns": 10**17}  # 1973 up to 2286, per unit


def integer_time_kind(lo: int, hi: int, bad_month: int, bad_day: int) -> IntegerTime | None:
    """How an integer time column reads: years (1931), YYYYMM (202403), YYYYMMDD (20240315), or
    seconds (milli-, micro-, nanoseconds) since 1970, told apart by their range (1973 to 2286).

    `bad_month`/`bad_day` count values whose month (day) digits are out of range when read as
    YYYYMM (YYYYMMDD); None when the integers are none of these (e.g. epoch seconds).
    """
    if 1000 <= lo <= hi <= 2999:
        return "year"
    if 100001 <= lo <= hi <= 299912 and not bad_month:
        return "yyyymm"
    if 10000101 <= lo <= hi <= 29991231 and not bad_day:
        return "yyyymmdd"
    for unit, low in _EPOCH_RANGES.items():  # epoch integers: each unit's plausible dates are apart
        if low <= lo <= hi < low * 100:
            return unit  # type: ignore[return-value]
    return None


# windows and baselines --------------------------------------------------------------------------
def parse_window(text: str) -> tuple[int, WindowUnit]:
    """`7d`, `2w`, `3mo` (or `3m`: there are no minute windows), `1q`, `5y` -> (n, unit)."""
    m = _WINDOW.match(text or "")
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if not m or unit is None or int(m.group(1)) < 1:
        raise WindowError(
            f"window {text!r} is not understood: use a number of days, weeks, months, quarters or "
            "years, e.g. 7d, 2w, 1mo, 1q or 1y"
        )
    return int(m.group(1)), unit  # type: ignore[return-value]


def _refuse(grain: Grain, what: str, suggestion: str | None = None) -> WindowError:
    return WindowError(
        f"{what}: the data is {grain.adjective}: try --window {suggestion or grain.suggested_window}"
    )


def window_grain(n: int, unit: WindowUnit, data: Grain, end: date) -> tuple[Grain, int]:
    """The grain a window of `n` `unit`s is counted in on this data, and its length in those periods.

    Refuses (WindowError) a window finer than the data's periods or not made of whole periods.
    """
    text = f"{n}{SUFFIX[unit]}"
    if data.unit == "day":
        if unit == "day":
            return Grain("day", 1, end), n
        if unit == "week":
            return Grain("day", 1, end), 7 * n
        months = n * MONTHS[unit]
        return Grain("month", 1, _month_start(_month_no(end))), months
    if data.unit == "week":
        assert data.days is not None
        if unit in ("day", "week"):
            length = n * (7 if unit == "week" else 1)
            if length % data.days:
                what = f"shorter than one {data.name}" if length < data.days else f"not whole {data.name}s"
                raise _refuse(data, f"--window {text} is {what}")
            return data, length // data.days
        weeks = {"month": 4, "quarter": 13, "year": 52}[unit] * n
        weeks = max(data.step, weeks - weeks % data.step)
        raise _refuse(data, f"--window {text}: months do not split into whole weeks", f"{weeks}w")
    assert data.months is not None
    if unit in ("day", "week"):
        raise _refuse(data, f"--window {text} is shorter than one {data.name} of the data")
    months = n * MONTHS[unit]
    if months % data.months:
        what = f"shorter than one {data.name}" if months < data.months else f"not whole {data.name}s"
        raise _refuse(data, f"--window {text} is {what}")
    return data, months // data.months


def _months_back(d: date, months: int) -> date:
    """The same day `months` earlier, clipped to the month's length (Mar 31 -> Feb 29)."""
    n = _month_no(d) - months
    return min(date(n // 12, n % 12 + 1, 1) + timedelta(days=d.day - 1), month_end(_month_start(n)))


def baseline_shift(kind: str, counted: Grain, data: Grain, length: int, end: date) -> int:
    """How many periods of `counted` the baseline lies before the current window.

    `previous`: the preceding window of the same length. `wow`/`mom`/`qoq`/`yoy`: a week, month,
    quarter, year earlier, aligned to the calendar at month grain and coarser; on daily data with a
    window of days, `yoy` is 364 days (weekdays align) and `mom`/`qoq` the same days a calendar
    month/quarter earlier.
    """
    if kind == "previous":
        return length
    if kind not in BASELINES:
        raise WindowError(f"baseline {kind!r} is not one of {', '.join(BASELINES)}")
    what, days, months = {
        "wow": ("week", 7, 0), "mom": ("month", 0, 1), "qoq": ("quarter", 0, 3), "yoy": ("year", 364, 12)
    }[kind]  # fmt: skip
    if counted.unit == "day":  # daily data, a window of days
        if kind == "wow" or kind == "yoy":
            return days
        return (end - _months_back(end, months)).days
    if not _fits(kind, counted):
        usable = [b for b in BASELINES if b == "previous" or _fits(b, counted)]
        periods = data.adjective
        if counted != data:
            periods += f" and the window is whole {counted.name}s"
        raise WindowError(
            f"--baseline {kind} compares with the {what} before, which is not a whole number of the "
            f"window's periods: the data is {periods}: try --baseline {' or '.join(usable)}"
        )
    if counted.days is not None:  # weekly periods
        return {"wow": 1, "yoy": 52}[kind] // counted.step
    assert counted.months is not None
    return months // counted.months


def _fits(kind: str, counted: Grain) -> bool:
    """Whether a baseline is a whole number of the window's periods away."""
    if counted.unit == "day":
        return True
    if counted.days is not None:
        weeks = {"wow": 1, "yoy": 52}.get(kind)
        return weeks is not None and weeks % counted.step == 0
    assert counted.months is not None
    months = {"mom": 1, "qoq": 3, "yoy": 12}.get(kind)
    return months is not None and months % counted.months == 0
