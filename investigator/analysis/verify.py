"""Recompute claimed root causes before a conclusion is accepted.

A claim passes when its segment exists, and its contribution (required for segment, rate, mix and
data-quality causes) has the claimed sign and a size within `tolerance` of what the data says.
Kinds that are not about a share (seasonality, broad-based, no change) are checked by re-running
the analysis that would support them. Anything unchecked fails: nothing passes by default.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel, ValidationError

from .causes import CauseKind, RootCause, finite
from .drill import _mask
from .movement import movement
from .quality import quality_checks
from .queries import BASE, CUR, whole
from .ratio import mix_rate
from .seasonality import seasonality
from .segments import broad_based
from .shares import _ratio, segment_share
from .spec import AnalysisSpec
from .table import Table


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


def _exists(cube: pd.DataFrame, spec: AnalysisSpec, segment: dict[str, str]) -> str | None:
    for k, v in segment.items():
        if k not in spec.dimensions:
            return f"{k!r} is not a dimension ({', '.join(spec.dimensions)})"
        if not (cube[k].astype(str) == str(v)).any():
            return f"{k}={v} does not occur in either window"
    return None if _mask(cube, segment).any() else "no rows match the whole segment"


def _size(claimed: float | None, measured: float | None, tolerance: float) -> str | None:
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


def verify_causes(
    table: Table,
    daily: pd.DataFrame,
    cube: pd.DataFrame,
    spec: AnalysisSpec,
    causes: list[RootCause] | list[dict[str, Any]],
    tolerance: float = 0.25,
) -> Verification:
    checks = []
    cache: dict[str, Any] = {}
    for i, raw in enumerate(causes):
        try:
            c = RootCause.model_validate(raw)
        except ValidationError as e:
            reason = "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())
            checks.append(
                CauseCheck(
                    index=i, kind=None, segment={}, ok=False, reason=f"unknown cause kind or shape ({reason})"
                )
            )
            continue
        kind, segment, claimed = c.kind, dict(c.segment), c.contribution
        measured: float | None = None
        problem = _exists(cube, spec, segment) if segment and kind != "data_quality" else None
        if problem is None and kind in ("segment_change", "rate_change"):
            if not segment and not spec.dimensions and kind == "segment_change":
                # a single series: the whole metric is the segment, and it carries all of the change
                change = finite(float(cube[CUR + spec.numerator].sum() - cube[BASE + spec.numerator].sum()))
                measured = 1.0 if change else None  # a NaN change is no change to carry
                problem = _size(claimed, measured, tolerance)
            elif not segment:
                problem = f"{kind} needs a segment"
            else:
                measured = segment_share(cube, spec, segment)
                problem = _size(claimed, measured, tolerance)
        elif problem is None and kind == "mix_shift":
            if spec.denominator is None or len(segment) != 1:
                problem = "mix_shift needs a ratio metric and a one-dimension segment"
            else:
                dim = next(iter(segment))
                table_ = mix_rate(cube, spec, dim)
                tot = whole(cube, spec)  # a distinct count's total is its own count, not its leaves'
                r0 = _ratio(tot[BASE + spec.numerator], tot[BASE + spec.denominator])
                r1 = _ratio(tot[CUR + spec.numerator], tot[CUR + spec.denominator])
                own = table_.loc[table_[dim] == str(segment[dim]), "mix"].sum()  # its part of the mix
                measured = float(own / (r1 - r0)) if r1 != r0 else None
                problem = _size(claimed, measured, tolerance)
        elif kind == "data_quality":
            q = cache.setdefault("quality", quality_checks(table, spec, daily))
            match = [x for x in q.issues if x.detail == c.detail and x.segment == segment]
            problem = None if match else f"no {c.detail} issue for {segment or 'the whole metric'}"
            measured = match[0].share if match else None
            problem = problem or _size(claimed, measured, tolerance)
        elif kind == "seasonality":
            s = seasonality(daily, spec)
            problem = None if s.seasonal else "the comparable earlier period did not move alike"
        elif kind == "broad_based":
            problem = None if broad_based(cube, spec).broad else "segments did not move alike"
        elif kind == "no_change":
            m = movement(daily, spec)
            within = m.significant is False and (m.z is None or math.isfinite(m.z))
            problem = None if within else "the movement is outside normal variation"
        checks.append(
            CauseCheck(
                index=i,
                kind=kind,
                segment=segment,
                ok=problem is None,
                measured=finite(measured),
                reason=problem or "verified",
            )
        )
    return Verification(ok=all(c.ok for c in checks), checks=checks)
