"""What a data-quality check reports: each issue with its estimated effect on the change."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, Field

from ..causes import QualityDetail


class QualityIssue(BaseModel):
    detail: QualityDetail
    segment: dict[str, str] = Field(default_factory=dict)
    days: list[date] = Field(default_factory=list)  # periods affected, by first day (as `daily_totals`)
    effect: float = 0.0  # estimated effect on the metric's change (numerator units)
    share: float = 0.0  # effect / total change of the numerator, within [-1, 1]
    evidence: str
    renamed_to: dict[str, str] = Field(default_factory=dict)  # relabelled: the value now in its place
    non_finite: int = 0  # null_values: how many were NaN or infinite in the data (left out of sums)


class QualityReport(BaseModel):
    kind: Literal["quality"] = "quality"
    metric: str
    numerator_change: float  # the change the shares are of: the numerator's; a ratio's own change for a ratio
    issues: list[QualityIssue]

    @property
    def material(self) -> list[QualityIssue]:
        """Issues that explain a meaningful part of the change."""
        return [i for i in self.issues if abs(i.share) >= 0.25]
