"""Regression (issue 25): the check that recomputes a claimed cause accepted a NaN share, because it
was written as "refuse if too far off" and every comparison with NaN is false. It now accepts only a
finite share within tolerance of a finite measured one; anything else fails."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

from investigator.analysis.causes import RootCause
from investigator.kinds.verify import verify_causes

from .helpers import spec
from .test_segments import S, leaf_cube

JP = {"country": "JP"}
DAILY = pd.DataFrame({"date": [S.current.end], "revenue": [1.0], "rows": [1]})
NON_FINITE = [math.nan, math.inf, -math.inf]


def cube() -> pd.DataFrame:
    """JP halves, everything else stays: JP carries about all of the change."""
    return leaf_cube(lambda r: 0.5 if r["country"] == "JP" else 1.0)


def check(causes: list[Any], frame: pd.DataFrame | None = None, tolerance: float = 0.25) -> list[str]:
    v = verify_causes(None, DAILY, cube() if frame is None else frame, S, causes, tolerance=tolerance)
    assert v.ok == all(c.ok for c in v.checks)
    return ["verified" if c.ok else c.reason for c in v.checks]


def test_a_true_finite_claim_still_passes() -> None:
    assert check([{"kind": "segment_change", "segment": JP, "contribution": 0.95}]) == ["verified"]


@pytest.mark.parametrize("share", [*NON_FINITE, "NaN", "Infinity"], ids=repr)
def test_a_claimed_share_that_is_no_number_fails_as_sent_by_the_kernel(share: Any) -> None:
    """What the kernel emits arrives as plain data and is validated here."""
    [reason] = check([{"kind": "segment_change", "segment": JP, "contribution": share}])
    assert reason != "verified" and "finite number" in reason


@pytest.mark.parametrize("share", NON_FINITE, ids=repr)
def test_a_claimed_share_that_is_no_number_fails_even_unvalidated(share: float) -> None:
    """A cause built without validation (model_construct, or model_copy(update=...)) reaches the
    size check itself: it must fail there too."""
    [reason] = check([RootCause.model_construct(kind="segment_change", segment=JP, contribution=share)])
    assert "is not a number" in reason


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
@pytest.mark.parametrize("ratio", [False, True], ids=["sum", "ratio"])
def test_a_share_the_data_cannot_measure_confirms_nothing(ratio: bool) -> None:
    """Infinite values in the data make JP's measured share NaN; a claim of 80% is not confirmed."""
    frame = cube()
    frame.loc[frame["country"] == "JP", ["cur_revenue", "base_revenue"]] = math.inf
    the_spec, kind = S, "segment_change"
    if ratio:
        frame = frame.assign(cur_orders=10.0, base_orders=10.0)
        the_spec, kind = spec(num="revenue", den="orders", dims=S.dimensions), "rate_change"
    cause = {"kind": kind, "segment": JP, "contribution": 0.8}
    [c] = verify_causes(None, DAILY, frame, the_spec, [cause]).checks
    assert not c.ok and c.reason == "the data shows no change for this cause to explain"
    assert c.measured is None  # the check's record holds no NaN either


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")
def test_a_single_series_whose_change_is_no_number_confirms_nothing() -> None:
    """With no dimensions the whole metric is the cause: it carries all of a change, but a NaN
    change (infinities in the data) is none to carry."""
    frame = pd.DataFrame({"cur_revenue": [math.inf], "base_revenue": [math.inf]})
    cause = {"kind": "segment_change", "segment": {}, "contribution": 1.0}
    [c] = verify_causes(None, DAILY, frame, spec(dims=[]), [cause]).checks
    assert not c.ok and c.reason == "the data shows no change for this cause to explain"


def test_a_tolerance_that_is_no_number_accepts_nothing() -> None:
    """A false claim (JP carries ~100%, not 20%) with a NaN tolerance: refused, not waved through."""
    [reason] = check([{"kind": "segment_change", "segment": JP, "contribution": 0.2}], tolerance=math.nan)
    assert reason.startswith("claimed share 20%")


@pytest.mark.parametrize("share", NON_FINITE, ids=repr)
def test_a_cause_holds_only_finite_numbers(share: float) -> None:
    with pytest.raises(ValueError, match="finite number"):
        RootCause(kind="segment_change", segment=JP, contribution=share)
    with pytest.raises(ValueError, match="finite number"):
        RootCause(kind="segment_change", segment=JP, contribution=0.5, change=share)
