"""Root causes: the one vocabulary of why a metric moved, shared by the planners, the check that
recomputes every claimed cause, and the report. Their numbers are finite: a NaN compares false with
everything, so a check written as "refuse if too far off" would let it through."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel, Field, FiniteFloat

CauseKind = Literal[
    "segment_change",  # a segment (any combination of dimension values) moved
    "rate_change",  # a ratio moved inside a segment
    "mix_shift",  # a ratio moved because the denominator's mix between segments shifted
    "data_quality",  # missing partitions, duplicates, late data, ... (`detail` says which)
    "seasonality",  # the comparable earlier period moved alike
    "broad_based",  # every segment moved alike
    "driver_change",  # a driver of the metric's tree moved (`driver` says which): conversion fell
    "no_change",  # the movement is within normal variation
]
QualityDetail = Literal[
    "missing_data",
    "duplicates",
    "incomplete_recent_data",
    "null_values",
    "negative_values",
    "relabelled",  # a dimension value vanished as another appeared in its place (renamed upstream)
    "new_coverage",  # a value with rows but no values before the window started being reported
]


class RootCause(BaseModel):
    """One reason the metric moved. `segment` is {} for the whole metric."""

    kind: CauseKind
    segment: dict[str, str] = Field(default_factory=dict)
    contribution: FiniteFloat | None = Field(
        None, description="share of the net change explained; passes 100% when other segments offset"
    )
    change: FiniteFloat | None = Field(None, description="the change it explains, in the metric's units")
    basis: Literal["net", "gross"] = Field(
        "net",
        description="what `contribution` is a share of: the net change, or (a flat total whose moves inside "
        "offset each other, where a share of the net would pass 300%) the gross movement: this cause's "
        "change plus the rest's, the other way, in size",
    )
    detail: QualityDetail | None = Field(None, description="data_quality only: which problem")
    driver: str | None = Field(None, description="driver_change only: the driver of the metric's tree")
    evidence: str = ""
    verified: bool | None = Field(None, description="recomputed from the data before concluding")


def finite(x: float | None) -> float | None:
    """A number a cause may carry: NaN and infinities (bad data, or a forged result) are none."""
    return x if x is not None and math.isfinite(x) else None
