"""What an analysis is about: the metric, its dimensions and the two periods compared.

This model crosses the host/kernel boundary as JSON, so it holds only plain values.
"""

from __future__ import annotations

from datetime import date, timedelta

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

    @property
    def is_ratio(self) -> bool:
        return self.denominator is not None

    @property
    def measures(self) -> list[str]:
        return [self.numerator] + ([self.denominator] if self.denominator else [])

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
        """How many `window_grain` periods the baseline lies before the current window."""
        g = self.window_grain
        return g.index(self.current.start) - g.index(self.baseline.start)

    def count_label(self, n: int) -> str:
        """`n` of the data's periods in words: "120 days", "63 months"."""
        return self.periods.count(n)


def _whole_months(w: Window) -> bool:
    return w.start.day == 1 and (w.end + timedelta(days=1)).day == 1
