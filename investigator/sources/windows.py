"""Which windows a table can answer: the one planner `investigate` and triage both use.

From the data's distinct dates (one engine query), the question's window length, baseline and
optional end: the data's grain, the current window of whole periods ending at `end` (by default
the data's last period; for months on daily data, the last whole month) and its baseline, or a
`DataError` that says what to write instead. A run and a triage scan refuse the same windows with
the same words.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import TYPE_CHECKING

import pandas as pd

from investigator.analysis.grain import (
    Grain,
    WindowError,
    baseline_shift,
    detect_grain,
    month_end,
    window_grain,
)
from investigator.analysis.ranges import range_text
from investigator.analysis.spec import Window
from investigator.errors import DataError, UserError

if TYPE_CHECKING:
    from ibis.expr.types import Table

    from investigator.request import Baseline, Span


@dataclass(frozen=True)
class Windows:
    """The windows a question is answered over, with the data's extent."""

    current: Window
    baseline: Window
    grain: Grain
    first: date
    """The data's first date."""
    last: date
    """The data's last date."""
    dates: tuple[date, ...]
    """Every date the data has a row on, in order."""


def distinct_dates(table: Table, time_column: str) -> list[date]:
    """Every date the data has a row on, in order (the range, the grain and the windows' rows, in
    one query)."""
    col = table[time_column]
    frame = table.filter(col.notnull()).select(d=col).distinct().to_pandas()
    return sorted(pd.Timestamp(v).date() for v in frame["d"])


def plan(
    dates: list[date], span: Span, baseline: Baseline | str, end: date | None, flag: str = "--"
) -> Windows:
    """The grain, the windows and the checks against the data, in one place. `baseline` is parsed
    already (a question's), or its text (a triage config's, checked when the config was read).

    `flag` prefixes option names in messages: "--" for the command line, "" for a config file's keys.
    """
    baseline = _parsed(baseline, flag)
    if not dates:
        raise DataError("the data has no rows with a date")
    grain = detect_grain(dates)
    first, last = dates[0], dates[-1]
    end = span.end or end or default_end(span, grain, last)
    current, base = plan_windows(span, baseline, grain, end, flag)
    windows = Windows(current, base, grain, first, last, tuple(dates))
    try:
        _check(windows, baseline, flag)
    except DataError as e:
        n = baseline.n
        if n is None or "before the data" not in str(e):
            raise
        g = Grain(grain.unit, grain.step, current.start)  # the grid `_check` reads
        fits = [
            k
            for k in range(2, n)
            if g.index(plan_windows(span, f"avg{k}", grain, end)[1].start) >= g.index(first)
        ]
        if not fits:
            raise
        raise DataError(f"{e} (avg{fits[-1]} is the longest average the data holds)") from None
    return windows


def _parsed(baseline: Baseline | str, flag: str) -> Baseline:
    from investigator.request import Baseline

    return Baseline.of(baseline, flag)


def plan_windows(
    span: Span | str, baseline: Baseline | str, data: Grain, end: date, flag: str = "--"
) -> tuple[Window, Window]:
    """The current window (whole periods, the last one holding `end`; or the range the span names)
    and its baseline: a named one, `avgN` (the N windows before, together) or a range of days.

    Windows are `Nd`, `Nw`, `Nmo` (or `Nm`), `Nq`, `Ny` or a range of whole periods; one finer than
    the data's periods, or not made of them, is refused with the window to use (a `DataError`).
    """
    from investigator.request import Span

    span = Span.of(span) if isinstance(span, str) else span
    baseline = _parsed(baseline, flag)
    try:
        if span.start is not None and span.end is not None:
            counted, length = _range_grain(span.start, span.end, data, f"{flag}window")
            current = Window(start=span.start, end=span.end)
        else:
            counted, length = window_grain(span.n, span.unit, data, end)
            if counted.unit == "day":
                current = Window(start=end - timedelta(days=length - 1), end=end)
            else:
                current = Window(start=counted.shift(end, -(length - 1)), end=counted.end(end))
        return current, _baseline(baseline, current, counted, data, length, flag)
    except WindowError as e:
        raise DataError(str(e)) from None
    except (OverflowError, ValueError):  # a window or baseline reaching past year 1
        raise UserError(
            f"window {span.text!r} with the {baseline} baseline reaches before year 1: pick a shorter "
            f"{flag}window"
        ) from None


def _range_grain(start: date, end: date, data: Grain, what: str) -> tuple[Grain, int]:
    """The periods a range is counted in (the data's; calendar months for whole months of daily
    data, as `--window 1mo`) and its length in them; a range not of whole periods is refused with
    the whole periods around it."""
    if data.start(start) != start or data.end(end) != end:
        raise WindowError(
            f"{what} {range_text(start, end)} is not whole {data.name}s: the data is {data.adjective}: "
            f"try {what} {range_text(data.start(start), data.end(end))}"
        )
    if data.unit == "day":
        if start.day == 1 and (end + timedelta(days=1)).day == 1:
            months = Grain("month", 1, start)
            return months, months.covers(start, end)
        return Grain("day", 1, end), (end - start).days + 1
    return data, data.covers(start, end)


def _baseline(kind: Baseline, current: Window, counted: Grain, data: Grain, length: int, flag: str) -> Window:
    """The baseline of `current` (`length` periods of `counted`)."""
    n = kind.n
    if n is not None:  # the n windows before, as one range: its sum over n is their mean
        return Window(start=counted.shift(current.start, -n * length), end=current.start - timedelta(days=1))
    if kind.start is not None and kind.end is not None:
        start, end = kind.start, kind.end
        _range_grain(start, end, data, f"{flag}baseline")
        if end >= current.start:  # overlapping, or after the window
            before = current.start - timedelta(days=1)
            fit = range_text(data.shift(current.start, -data.covers(start, end)), before)
            what = "overlaps" if start <= current.end else "comes after"
            raise WindowError(
                f"{flag}baseline {kind} {what} the window {range_text(current.start, current.end)}: "
                f"the baseline must end before {current.start}: try {flag}baseline {fit}"
            )
        return Window(start=start, end=end)
    assert kind.kind not in ("avg", "range")
    shift = baseline_shift(kind.kind, counted, data, length, current.end)
    if counted.unit == "day":
        return current.shifted(shift)
    b_start, b_end = counted.shift_window(current.start, current.end, -shift)
    return Window(start=b_start, end=b_end)


def default_end(span: Span, grain: Grain, last: date) -> date:
    """The last period in the data; for a window of months on daily data, the last whole month."""
    if grain.unit == "day" and span.unit in ("month", "quarter", "year") and month_end(last) != last:
        return last.replace(day=1) - timedelta(days=1)
    return last


def _check(w: Windows, baseline: Baseline, flag: str) -> None:
    """Refuse windows that stick out of the data or hold no rows, in the data's periods (a window
    holds rows when one of the data's dates falls in it)."""
    g = Grain(w.grain.unit, w.grain.step, w.current.start)  # the grid the windows are on
    first, last = w.first, w.last
    span = f"the data covers {first} to {last}"
    if g.unit != "day":
        n = g.index(last) - g.index(first) + 1
        span = f"the data covers {g.label(first)} to {g.label(last)} ({g.count(n)}, {g.adjective})"
    # a window that runs past the data's end is answered: the quality checks name the periods
    # with no rows yet as the data problem they are; one that starts after it has nothing to say
    if g.index(w.current.start) > g.index(last):
        last_words = last.isoformat() if g.unit == "day" else f"its last {g.name} is {g.label(last)}"
        raise DataError(
            f"the window starts {w.current.start}, after the data ({last_words}); {span}: "
            f"pick an earlier {flag}end"
        )
    # a baseline that starts before the data would compare a partial sum with a full one
    if g.index(w.baseline.start) < g.index(first):
        raise DataError(
            f"the {baseline} baseline starts {w.baseline.start}, before the data; {span}: "
            f"pick a later {flag}end, a shorter {flag}window or another {flag}baseline"
        )
    if not any(w.current.start <= d <= w.current.end for d in w.dates):
        raise DataError(
            f"no rows in the window {w.current.start} to {w.current.end}; {span}: pick another {flag}end"
        )
    if not any(w.baseline.start <= d <= w.baseline.end for d in w.dates):
        raise DataError(
            f"no rows in the {baseline} baseline {w.baseline.start} to {w.baseline.end}; {span}: "
            f"pick another {flag}baseline or {flag}end"
        )
