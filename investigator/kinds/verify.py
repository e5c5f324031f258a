"""Recompute claimed root causes before a conclusion is accepted: each claim is checked by the
kind that owns it (`Kind.check`), after the check every segment claim shares (does the segment
exist?). A claim no kind owns fails: nothing passes by default."""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import ValidationError

from investigator.analysis.causes import RootCause, finite
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.table import Table
from investigator.analysis.verify import CauseCheck, Verification, segment_problem, size_problem
from investigator.kinds import owner
from investigator.kinds.base import CheckData, Checked
from investigator.kinds.common import gross_share


def verify_causes(
    table: Table,
    daily: pd.DataFrame,
    cube: pd.DataFrame,
    spec: AnalysisSpec,
    causes: list[RootCause] | list[dict[str, Any]],
    tolerance: float = 0.25,
    cache: dict[str, object] | None = None,
) -> Verification:
    """`cache`: what checks computed of this data before (`base.prepared`), kept by the caller."""
    data = CheckData(table, daily, cube, spec, tolerance, {} if cache is None else cache)
    checks = []
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
        checked = _check(data, c)
        checks.append(
            CauseCheck(
                index=i,
                kind=c.kind,
                segment=dict(c.segment),
                ok=checked.problem is None,
                measured=finite(checked.measured),
                reason=checked.problem or "verified",
            )
        )
    return Verification(ok=all(c.ok for c in checks), checks=checks)


def _check(data: CheckData, c: RootCause) -> Checked:
    missing = (
        segment_problem(data.cube, data.spec, c.segment) if c.segment and c.kind != "data_quality" else None
    )
    if missing is not None:
        return Checked(missing)
    kind = owner(c, data.spec)
    if kind is None:
        return Checked(f"no kind checks {c.kind}")
    checked = kind.check(data, c)
    if c.basis != "gross" or checked.measured is None:
        return checked
    # a share of the gross movement (a flat total's): the kind measured its share of the net change
    measured = gross_share(checked.measured)
    problem = size_problem(c.contribution, measured, data.tolerance)
    if problem is not None:
        return Checked(problem, measured)
    as_net = c.model_copy(update={"contribution": checked.measured, "basis": "net"})
    return Checked(kind.check(data, as_net).problem, measured)  # the kind's other checks still hold
