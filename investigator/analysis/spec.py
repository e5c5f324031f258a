"""What an analysis is about: the metric, its dimensions and the two periods compared.

This model crosses the host/kernel boundary as JSON, so it holds only plain values.
"""

from __future__ import annotations

from datetime import date, timedelta

from pydantic import BaseModel, Field


class Window(BaseModel):
    """An inclusive range of days."""

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
