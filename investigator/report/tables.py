"""The report's tables as rows of text, shared by Markdown, the terminal and HTML: one place says
what a segment's or a driver's row shows, so the three views cannot disagree."""

from __future__ import annotations

from investigator.analysis.causes import RootCause
from investigator.analysis.contributions import SegmentChange
from investigator.analysis.drivers import DriverPart, DriverSplit
from investigator.fmt import num, pct, seg

SEGMENT_COLUMNS = ("segment", "window", "baseline", "change", "share")
DRIVER_COLUMNS = (
    "driver",
    "measured as",
    "window",
    "baseline",
    "change",
    "part of the change",
    "share",
    "usual?",
)


def signed(x: float | None) -> str:
    """An absolute change with its sign: +1.20M, -864.63k."""
    return "" if x is None else ("+" if x > 0 else "") + num(x)


def segment_cells(row: SegmentChange) -> list[str]:
    """segment, window, baseline, change, share: one row of the ranked table, as text."""
    share = "" if row.share is None else f"{row.share:.0%}"
    return [seg(row.segment), num(row.current), num(row.baseline), signed(row.change), share]


def cause_share(c: RootCause) -> str:
    """A cause's share for the tables: "55% (gross)" when it is of the movement either way."""
    if c.contribution is None:
        return ""
    return f"{c.contribution:.0%}" + (" (gross)" if c.basis == "gross" else "")


def driver_rows(split: DriverSplit | None) -> list[list[str]]:
    """The driver tree as rows: the metric itself first, then each driver with its values in the
    two windows, its change, the part of the metric's change it carries (the parts add up to the
    metric's change) and whether its own move is within its usual ones. Empty without a split."""
    if split is None or not split.split:
        return []
    change = _pct(split.current, split.baseline)
    top = [split.metric, split.tree, num(split.current), num(split.baseline), change, signed(split.change),
           "100%", ""]  # fmt: skip
    return [top, *(_driver(p) for p in split.parts)]


def _driver(p: DriverPart) -> list[str]:
    share = "" if p.share is None else f"{p.share:.0%}"
    usual = "" if p.usual is None else ("within" if p.usual else "beyond") + f" (z {p.z:+.1f})"
    return [p.name, p.text, num(p.current), num(p.baseline), pct(p.change_pct), signed(p.part), share, usual]


def _pct(current: float | None, baseline: float | None) -> str:
    return pct(current / baseline - 1) if current is not None and baseline else ""
