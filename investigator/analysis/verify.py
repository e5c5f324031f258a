"""What the check of claimed root causes returns, and the two tests every kind's check shares.

Each kind of cause re-checks its own claims (`investigator.kinds`, `check`); `verify_causes` in
`investigator.kinds.verify` runs them. A claim passes when its segment exists and its contribution
has the claimed sign and a size within `tolerance` of what the data says; kinds that are not about
a share (seasonality, broad-based, no change) re-run the analysis that would support them. Anything
unchecked fails: nothing passes by default.
"""

from __future__ import annotations

import math
from typing import Literal

import pandas as pd
from pydantic import BaseModel

from .causes import CauseKind
from .drill import _mask
from .spec import AnalysisSpec


class CauseCheck(BaseModel):
    index: int
    kind: CauseKind | None  # None: the claim was not a cause of any known kind
    segment: dict[str, str]
    ok: bool
    measured: float | None = None
    reason: str


class Verification(BaseModel):
    kind: Literal["verification"] = "verification"
    ok: bool
    checks: list[CauseCheck]


def segment_problem(cube: pd.DataFrame, spec: AnalysisSpec, segment: dict[str, str]) -> str | None:
    """Why `segment` is not a segment of the data (None when it is)."""
    for k, v in segment.items():
        if k not in spec.dimensions:
            return f"{k!r} is not a dimension ({', '.join(spec.dimensions)})"
        if not (cube[k].astype(str) == str(v)).any():
            return f"{k}={v} does not occur in either window"
    return None if _mask(cube, segment).any() else "no rows match the whole segment"


def size_problem(claimed: float | None, measured: float | None, tolerance: float) -> str | None:
    """A claimed share against the measured one. A claim without a number cannot be checked, and a
    share the data cannot measure (no change at all) does not confirm one: both fail. Written as
    "accept only if within tolerance", so a NaN anywhere (every comparison with it is false) fails."""
    if claimed is None:
        return "the cause carries no share of the change to check (give its contribution)"
    if not math.isfinite(claimed):
        return f"claimed share {claimed} is not a number (give its contribution, e.g. 0.78)"
    if measured is None or not math.isfinite(measured):
        return "the data shows no change for this cause to explain"
    if claimed * measured >= 0 and abs(claimed - measured) <= tolerance:
        return None
    if claimed * measured < 0:
        return f"claimed share {claimed:+.0%} but the data says {measured:+.0%} (opposite sign)"
    return f"claimed share {claimed:.0%} but the data says {measured:.0%}"
