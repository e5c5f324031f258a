"""Typed doors to `matplotlib.dates`, which ships no type stubs (the rest of matplotlib has them).
Each imports matplotlib when called, so importing the report costs nothing until a chart is drawn."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from matplotlib.ticker import Formatter, Locator

__all__ = ["auto_locator", "concise_formatter", "date_formatter", "date_of", "year_locator"]


def date_of(x: float) -> datetime:
    """The date at an axis position (matplotlib's days since its epoch)."""
    from matplotlib.dates import num2date

    d: datetime = num2date(x)  # type: ignore[no-untyped-call]
    return d


def year_locator(base: int) -> Locator:
    """A tick every `base` years, on years divisible by it."""
    from matplotlib.dates import YearLocator

    locator: Locator = YearLocator(base=base)  # type: ignore[no-untyped-call]
    return locator


def auto_locator(minticks: int, maxticks: int) -> Locator:
    from matplotlib.dates import AutoDateLocator

    locator: Locator = AutoDateLocator(minticks=minticks, maxticks=maxticks)  # type: ignore[no-untyped-call]
    return locator


def date_formatter(fmt: str) -> Formatter:
    """Ticks labelled with a `strftime` format."""
    from matplotlib.dates import DateFormatter

    formatter: Formatter = DateFormatter(fmt)  # type: ignore[no-untyped-call]
    return formatter


def concise_formatter(locator: Locator, offset_formats: list[str]) -> Formatter:
    """Short tick labels for `locator`'s ticks, with `offset_formats` for the offset beside the axis
    (one per level: years, months, days, hours, minutes, seconds)."""
    from matplotlib.dates import ConciseDateFormatter

    formatter: ConciseDateFormatter = ConciseDateFormatter(locator, show_offset=True)  # type: ignore[no-untyped-call]
    formatter.offset_formats = offset_formats
    return formatter
