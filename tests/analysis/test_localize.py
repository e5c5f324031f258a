"""Localization finds planted causes at the right depth, and nothing in noise or broad moves."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.localize import Element, localize, localize_ratio

DIMS = {
    "country": ["US", "IN", "JP", "DE", "FR", "BR", "GB", "MX"],
    "platform": ["web", "ios", "android"],
    "channel": ["social", "search", "email", "direct", "ads"],
    "category": ["toys", "books", "food", "tech", "home", "garden"],
}
SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def weekly(
    causes: list[tuple[dict[str, str], float]],
    *,
    seed: int = 0,
    overall: float = 1.0,
    scale: float = 100.0,
    dims: dict[str, list[str]] = DIMS,
) -> pd.DataFrame:
    """Last 7 days vs previous 7 days, Poisson noise, each cause scaling its segment."""
    rng = np.random.default_rng(seed)
    leaves = pd.DataFrame(list(itertools.product(*dims.values())), columns=list(dims))
    base = scale * rng.lognormal(0.0, 1.0, len(leaves))
    factor = np.full(len(leaves), overall)
    for segment, mult in causes:
        factor[in_segment(leaves, segment)] *= mult
    leaves["prev"] = rng.poisson(base).astype(float)
    leaves["last"] = rng.poisson(base * factor).astype(float)
    return leaves


def in_segment(frame: pd.DataFrame, segment: dict[str, str]) -> np.ndarray:
    mask = np.ones(len(frame), dtype=bool)
    for key, value in segment.items():
        mask &= (frame[key].astype(str) == value).to_numpy()
    return mask


def segments(found: list[Element]) -> list[dict[str, str]]:
    return [e.segment for e in found]


def run(frame: pd.DataFrame, **kwargs: int) -> list[Element]:
    return localize(frame, [d for d in DIMS if d in frame.columns], "last", "prev", **kwargs)


def test_single_attribute_drop_is_the_attribute_not_its_children() -> None:
    found = run(weekly([({"channel": "social"}, 0.7)]))
    assert segments(found) == [{"channel": "social"}]
    assert found[0].change < 0
    assert found[0].share == pytest.approx(1.0, abs=0.2)


def test_two_attribute_drop_is_the_pair_not_its_parent() -> None:
    found = run(weekly([({"country": "IN", "platform": "web"}, 0.6)], seed=1))
    assert segments(found) == [{"country": "IN", "platform": "web"}]


def test_two_causes_are_both_found() -> None:
    found = run(weekly([({"country": "JP"}, 0.6), ({"category": "toys"}, 1.6)], seed=2))
    assert sorted(map(str, segments(found))) == sorted(map(str, [{"country": "JP"}, {"category": "toys"}]))


def test_spike_is_found_with_positive_change() -> None:
    found = run(weekly([({"country": "BR", "channel": "ads"}, 3.0)], seed=3))
    assert segments(found) == [{"country": "BR", "channel": "ads"}]
    assert found[0].change > 0


def test_new_segment_with_zero_baseline_is_found_as_that_segment() -> None:
    frame = weekly([], seed=4)
    new = weekly([], seed=5, dims={**DIMS, "country": ["NZ"]}, scale=300.0)
    new["prev"] = 0.0
    found = run(pd.concat([frame, new], ignore_index=True))
    assert segments(found) == [{"country": "NZ"}]
    assert found[0].expected == 0.0
    assert found[0].actual > 0


def test_disappearing_segment_is_found() -> None:
    frame = weekly([], seed=6)
    frame.loc[in_segment(frame, {"platform": "ios", "category": "tech"}), "last"] = 0.0
    assert segments(run(frame)) == [{"platform": "ios", "category": "tech"}]


def test_leaves_with_zero_baseline_do_not_break_the_search() -> None:
    frame = weekly([({"channel": "email"}, 0.5)], seed=7)
    zeroed = frame.sample(frac=0.2, random_state=0).index
    frame.loc[zeroed, ["prev", "last"]] = 0.0
    assert segments(run(frame)) == [{"channel": "email"}]


def test_single_dimension() -> None:
    frame = pd.DataFrame({"country": DIMS["country"], "prev": 1000.0, "last": 1000.0})
    frame.loc[frame["country"] == "DE", "last"] = 500.0
    assert segments(run(frame)) == [{"country": "DE"}]


def test_nans_count_as_zero_and_duplicates_are_summed() -> None:
    frame = weekly([({"category": "food"}, 0.5)], seed=8)
    frame.loc[frame.sample(n=20, random_state=1).index, ["prev", "last"]] = np.nan
    doubled = pd.concat([frame, frame], ignore_index=True)
    found = run(doubled)
    assert segments(found) == [{"category": "food"}]
    assert found[0].expected == pytest.approx(
        2 * frame.loc[in_segment(frame, found[0].segment), "prev"].sum()
    )


def test_categorical_dimensions() -> None:
    frame = weekly([({"platform": "android"}, 0.6)], seed=9)
    frame = frame.astype({d: "category" for d in DIMS})
    assert segments(run(frame)) == [{"platform": "android"}]


def test_evenly_spread_change_gives_nothing() -> None:
    assert run(weekly([], seed=10, overall=0.9)) == []


def test_pure_noise_gives_nothing() -> None:
    for seed in range(3):
        assert run(weekly([], seed=11 + seed, scale=20.0)) == []


def test_ratio_metric_finds_the_segment_whose_rate_changed() -> None:
    rng = np.random.default_rng(12)
    frame = weekly([], seed=12, scale=500.0)
    rate = rng.uniform(0.02, 0.08, len(frame))
    drop = np.where(in_segment(frame, {"country": "US", "platform": "ios"}), 0.5, 1.0)
    frame["orders_prev"] = rng.binomial(frame["prev"].astype(int), rate).astype(float)
    frame["orders_last"] = rng.binomial(frame["last"].astype(int), rate * drop).astype(float)
    found = localize_ratio(frame, list(DIMS), "orders_last", "orders_prev", "last", "prev")
    assert segments(found) == [{"country": "US", "platform": "ios"}]
    assert found[0].actual < found[0].expected
    assert found[0].change < 0


def test_ratio_metric_ignores_a_pure_mix_shift() -> None:
    frame = weekly([({"channel": "ads"}, 3.0)], seed=13, scale=500.0)
    rate = np.where(frame["channel"] == "ads", 0.01, 0.05)
    frame["orders_prev"] = frame["prev"] * rate
    frame["orders_last"] = frame["last"] * rate
    found = localize_ratio(frame, list(DIMS), "orders_last", "orders_prev", "last", "prev")
    assert found == []


@pytest.mark.parametrize("seed", range(12))
def test_random_planted_cause_comes_first(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    names = [f"d{i}" for i in range(int(rng.integers(2, 5)))]
    dims = {n: [f"{n}v{j}" for j in range(int(rng.integers(3, 9)))] for n in names}
    depth = int(rng.integers(1, min(3, len(names) - 1) + 1))  # a segment, not a single leaf
    attrs = sorted(rng.choice(names, size=depth, replace=False).tolist())
    planted = {a: str(rng.choice(dims[a])) for a in attrs}
    mult = float(rng.choice([0.4, 0.6, 1.7, 2.5]))
    frame = weekly([(planted, mult)], seed=seed, dims=dims, scale=float(rng.uniform(300, 3000)))
    found = localize(frame, names, "last", "prev")
    assert found, f"nothing found for {planted} x{mult}"
    assert found[0].segment == planted


def test_public_b0_cases_are_localized_exactly() -> None:
    folder = SHARED / "rca-benchmarks" / "B0" / "B_cuboid_layer_2_n_ele_2"
    if not folder.is_dir():
        pytest.skip(f"../shared not present: {folder}")
    info = pd.read_csv(folder / "injection_info.csv")
    for _, row in info.head(2).iterrows():
        frame = pd.read_csv(folder / f"{row['timestamp']}.csv")
        found = localize(frame, ["a", "b", "c", "d"])
        got = {"&".join(f"{k}={v}" for k, v in sorted(e.segment.items())) for e in found}
        want = {"&".join(sorted(e.split("&"))) for e in row["set"].split(";")}
        assert got == want
