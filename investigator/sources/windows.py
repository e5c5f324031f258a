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
    BaselineKind,
    Grain,
    WindowError,
    baseline_shift,
    detect_grain,
    month_end,
    window_grain,
)
from investigator.analysis.spec import Window
from investigator.errors import DataError, UserError

if TYPE_CHECKING:
    from ibis.expr.types import Table

    from investigator.request import Span


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
    dates: list[date], span: Span, baseline: BaselineKind, end: date | None, flag: str = "--"
) -> Windows:
    """The grain, the windows and the checks against the data, in one place.

    `flag` prefixes option names in messages: "--" for the command line, "" for a config file's keys.
    """
    if not dates:
        raise DataError("the data has no rows with a date")
    grain = detect_grain(dates)
    first, last = dates[0], dates[-1]
    end = end or default_end(span, grain, last)
    current, base = plan_windows(span, baseline, grain, end, flag)
    windows = Windows(current, base, grain, first, last, tuple(dates))
    _check(windows, baseline, flag)
    return windows


def plan_windows(
    span: Span | str, baseline: BaselineKind, data: Grain, end: date, flag: str = "--"
) -> tuple[Window, Window]:
    """The current window (whole periods, the last one holding `end`) and its baseline.

    Windows are `Nd`, `Nw`, `Nmo` (or `Nm`), `Nq`, `Ny`; one finer than the data's periods, or not
    made of them, is refused with the window to use (a `DataError`).
    """
    from investigator.request import Span

    span = Span.of(span) if isinstance(span, str) else span
    try:
        counted, length = window_grain(span.n, span.unit, data, end)
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
            f"window {span.text!r} with the {baseline} baseline reaches before year 1: pick a shorter "
            f"{flag}window"
        ) from None
    return Window(start=start, end=stop), Window(start=b_start, end=b_stop)


def default_end(span: Span, grain: Grain, last: date) -> date:
    """The last period in the data; for a window of months on daily data, the last whole month."""
    if grain.unit == "day" and span.unit in ("month", "quarter", "year") and month_end(last) != last:
        return last.replace(day=1) - timedelta(days=1)
    return last


def _check(w: Windows, baseline: BaselineKind, flag: str) -> None:
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
