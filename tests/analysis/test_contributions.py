from __future__ import annotations

import pytest

from investigator.analysis.contributions import contributions, top_contributions

from .helpers import cube, spec


def test_shares_sum_to_one_and_biggest_mover_first() -> None:
    c = cube([("US", "web", 80, 100), ("US", "ios", 50, 50), ("DE", "web", 40, 50), ("DE", "ios", 30, 20)])
    out = contributions(c, spec(), ["country"])
    assert list(out["country"]) == ["US", "DE"]
    assert out["change"].tolist() == [-20, 0]
    assert out["share"].sum() == pytest.approx(1.0)
    assert out.loc[0, "baseline_share"] == pytest.approx(150 / 220)


def test_appearing_and_disappearing_segments() -> None:
    c = cube([("US", "web", 100, 100), ("NEW", "web", 30, 0), ("OLD", "web", 0, 20)])
    out = contributions(c, spec(), ["country"]).set_index("country")
    assert out.loc["NEW", "change"] == 30 and out.loc["OLD", "change"] == -20
    assert out.loc["OLD", "change_pct"] == -1.0
    assert out["change_pct"].isna()["NEW"]  # zero baseline: no percentage, no crash
    assert out.loc["NEW", "share"] == pytest.approx(3.0)


def test_combinations_and_top_contributions() -> None:
    c = cube(
        [("US", "web", 50, 100), ("US", "ios", 100, 100), ("DE", "web", 100, 100), ("DE", "ios", 100, 100)]
    )
    pair = contributions(c, spec(), ["country", "platform"])
    assert pair.iloc[0][["country", "platform"]].tolist() == ["US", "web"]
    top = top_contributions(c, spec(), max_depth=2, n=3)
    assert top.iloc[0]["segment"] in (
        {"country": "US"},
        {"platform": "web"},
        {"country": "US", "platform": "web"},
    )
    assert top.iloc[0]["change"] == -50


def test_no_change_gives_zero_shares() -> None:
    c = cube([("US", "web", 10, 10)])
    assert contributions(c, spec(), ["country"])["share"].tolist() == [0.0]
