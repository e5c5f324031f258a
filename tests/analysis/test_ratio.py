from __future__ import annotations

import pytest

from investigator.analysis.ratio import decompose_ratio, mix_rate
from investigator.analysis.spec import AnalysisSpec

from .helpers import cube, spec

MEASURES = ("revenue", "orders")


def ratio_spec() -> AnalysisSpec:
    return spec(num="revenue", den="orders")


def test_mix_and_rate_add_up_to_the_change() -> None:
    # (country, platform, cur_rev, base_rev, cur_orders, base_orders)
    c = cube(
        [("US", "web", 900, 1000, 9, 10), ("US", "ios", 300, 100, 15, 5), ("DE", "web", 500, 400, 5, 4)],
        measures=MEASURES,
    )
    s = ratio_spec()
    r0, r1 = 1500 / 19, 1700 / 29
    for dim in ("country", "platform"):
        t = mix_rate(c, s, dim)
        assert (t["mix"] + t["rate"]).sum() == pytest.approx(r1 - r0)


def test_pure_mix_shift_is_named_with_its_segment() -> None:
    # each platform keeps its order value (web 100, app 20); orders move from web to app
    c = cube(
        [("US", "web", 50 * 100, 100 * 100, 50, 100), ("US", "app", 150 * 20, 100 * 20, 150, 100)],
        measures=MEASURES,
    )
    s = ratio_spec()
    t = mix_rate(c, s, "platform").set_index("platform")
    assert t["rate"].abs().max() == pytest.approx(0.0, abs=1e-9)
    d = decompose_ratio(c, s)
    assert d.driver == "mix" and d.dimension == "platform" and d.segment == "web"
    assert d.driver_share == pytest.approx(1.0)


def test_pure_rate_change_is_named_with_its_segment() -> None:
    c = cube(
        [("US", "web", 100 * 50, 100 * 50, 100, 100), ("US", "app", 100 * 30, 100 * 50, 100, 100),
         ("DE", "web", 100 * 50, 100 * 50, 100, 100), ("DE", "app", 100 * 50, 100 * 50, 100, 100)],
        measures=MEASURES,
    )  # fmt: skip
    d = decompose_ratio(c, ratio_spec())
    assert d.driver == "rate"
    assert (d.dimension, d.segment) in (("platform", "app"), ("country", "US"))
    assert d.change == pytest.approx((100 * 30 + 300 * 50) / 400 - 50)


def test_segment_absent_in_one_period_uses_the_other_rate() -> None:
    c = cube([("US", "web", 100, 100, 10, 10), ("US", "new", 50, 0, 5, 0)], measures=MEASURES)
    t = mix_rate(c, ratio_spec(), "platform").set_index("platform")
    assert t.loc["new", "rate"] == 0.0  # no rate change for a segment with no baseline
    assert t.loc["new", "baseline_rate"] == t.loc["new", "current_rate"] == 10.0


def test_additive_metric_is_refused() -> None:
    with pytest.raises(ValueError, match="not a ratio"):
        mix_rate(cube([("US", "web", 1, 1)]), spec(), "country")
