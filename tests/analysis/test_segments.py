from __future__ import annotations

from itertools import product
from typing import Any

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.segments import broad_based, drill_down, explain_segments
from investigator.analysis.shares import segment_share
from investigator.kinds.verify import verify_causes

from .helpers import spec

DIMS = {
    "country": ["US", "DE", "JP", "BR"],
    "platform": ["web", "ios", "android"],
    "channel": ["a", "b", "c"],
}


def leaf_cube(effect, seed: int = 0, level: float = 1000.0) -> pd.DataFrame:  # type: ignore[no-untyped-def]
    """Every leaf at `level` with 1% noise; `effect(row) -> factor` on the current period."""
    rng = np.random.default_rng(seed)
    rows = []
    for leaf in product(*DIMS.values()):
        row = dict(zip(DIMS, leaf, strict=True))
        base = level * (1 + rng.normal(0, 0.01))
        rows.append(
            {**row, "cur_revenue": base * effect(row) * (1 + rng.normal(0, 0.01)), "base_revenue": base}
        )
    return pd.DataFrame(rows)


S = spec(dims=list(DIMS))


def test_everything_down_alike_is_broad_based_and_localizes_nothing() -> None:
    c = leaf_cube(lambda r: 0.9)
    b = broad_based(c, S)
    assert b.broad and b.change_pct == pytest.approx(-0.1, abs=0.01)
    e = explain_segments(c, S)
    assert e.elements == [] and e.broad.broad


def test_one_segment_drop_is_not_broad_and_is_localized() -> None:
    c = leaf_cube(lambda r: 0.5 if r["country"] == "JP" else 1.0)
    assert not broad_based(c, S).broad
    e = explain_segments(c, S)
    assert e.elements[0].segment == {"country": "JP"}
    assert e.elements[0].share == pytest.approx(1.0, abs=0.1)


def test_drill_down_uniform_inside_the_segment() -> None:
    c = leaf_cube(lambda r: 0.5 if r["country"] == "JP" else 1.0)
    d = drill_down(c, S, {"country": "JP"})
    assert d.uniform and d.concentrated_in == {}
    assert d.segment_change_pct == pytest.approx(-0.5, abs=0.02)
    assert d.share_of_total == pytest.approx(1.0, abs=0.05)


def test_drill_down_finds_the_child_that_holds_the_change() -> None:
    c = leaf_cube(lambda r: 0.2 if (r["country"], r["platform"]) == ("JP", "web") else 1.0)
    d = drill_down(c, S, {"country": "JP"})
    assert not d.uniform and d.concentrated_in == {"country": "JP", "platform": "web"}


def test_segment_share_for_sums_and_ratios() -> None:
    c = leaf_cube(lambda r: 0.5 if r["country"] == "JP" else 1.0)
    assert segment_share(c, S, {"country": "JP"}) == pytest.approx(1.0, abs=0.05)
    assert segment_share(c, S, {"country": "US"}) == pytest.approx(0.0, abs=0.05)
    ratio = c.assign(cur_orders=10.0, base_orders=10.0)
    rs = spec(num="revenue", den="orders", dims=list(DIMS))
    assert segment_share(ratio, rs, {"country": "JP"}) == pytest.approx(1.0, abs=0.05)


def test_verify_accepts_true_claims_and_refuses_false_ones() -> None:
    c = leaf_cube(lambda r: 0.5 if r["country"] == "JP" else 1.0)
    daily = pd.DataFrame({"date": [S.current.end], "revenue": [1.0], "rows": [1]})
    claims: list[dict[str, Any]] = [
            {"kind": "segment_change", "segment": {"country": "JP"}, "contribution": 0.95},
            {"kind": "segment_change", "segment": {"country": "US"}, "contribution": 0.9},
            {"kind": "segment_change", "segment": {"country": "XX"}},
            {"kind": "segment_change", "segment": {"planet": "mars"}},
            {"kind": "segment_change", "segment": {"country": "JP"}, "contribution": -1.0},
            {"kind": "broad_based"},
            {"kind": "made_up"},
    ]  # fmt: skip
    v = verify_causes(None, daily, c, S, claims)
    assert [c.ok for c in v.checks] == [True, False, False, False, False, False, False]
    assert not v.ok
    assert "does not occur" in v.checks[2].reason and "not a dimension" in v.checks[3].reason
    assert "opposite sign" in v.checks[4].reason and "unknown cause kind" in v.checks[6].reason


def test_movers_are_the_segments_outside_their_own_history() -> None:
    from investigator.analysis.queries import open_table, period_cube
    from investigator.sources.synth import generate

    dims = {
        "region": ["north", "south", "east", "west", "central", "islands"],
        "device": ["desktop", "tablet", "phone"],
        "source": ["seo", "sem", "display", "referral", "push"],
        "product": ["basic", "plus", "pro", "team"],
    }
    frame, _ = generate("no_change", seed=2, dims=dims)
    inside = pd.to_datetime(frame["date"]) > pd.Timestamp("2026-03-22")
    frame.loc[inside & (frame["region"] == "south"), "revenue"] *= 0.6
    frame.loc[inside & (frame["source"] == "display"), "revenue"] *= 1.6
    table = open_table(frame, "date")
    s = spec(dims=list(dims))
    moved = explain_segments(period_cube(table, s), s, table=table).movers
    assert {next(iter(m.segment.items())) for m in moved} >= {("region", "south"), ("source", "display")}
    assert all(abs(m.z) >= 3 for m in moved)  # MOVER_Z: the verdict asks 4 of one that only offsets
    assert explain_segments(period_cube(table, s), s).movers == []  # only with the table
