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


def test_single_planted_leaf_is_that_leaf() -> None:
    dims = {d: DIMS[d] for d in ("country", "platform", "channel")}
    leaf = {"country": "JP", "platform": "ios", "channel": "email"}
    frame = weekly([(leaf, 0.3)], seed=20, dims=dims, scale=2000.0)
    found = localize(frame, list(dims), "last", "prev")
    assert segments(found) == [leaf]


def test_nothing_planted_in_a_wide_sparse_cube_gives_nothing() -> None:
    # 20k leaves drawn from 5 attributes of 30 values: most deep candidates hold one leaf, and
    # last and previous week are independent draws (no change anywhere).
    rng = np.random.default_rng(21)
    dims = [f"attr{i}" for i in range(5)]
    codes = np.unique(rng.integers(0, 30, size=(20_000, 5)), axis=0)
    frame = pd.DataFrame({d: [f"{d}_{v}" for v in codes[:, i]] for i, d in enumerate(dims)})
    base = rng.lognormal(3.0, 1.0, len(frame))
    frame["prev"] = rng.poisson(base).astype(float)
    frame["last"] = rng.poisson(base).astype(float)
    assert localize(frame, dims, "last", "prev") == []


def test_a_later_cross_cutting_cause_does_not_lift_the_first_to_its_parent() -> None:
    # Every category of the US holds some email leaves: until email is found, they all look moved.
    causes = [({"country": "US", "category": "toys"}, 0.3), ({"channel": "email"}, 0.85)]
    found = run(weekly(causes, seed=22, scale=300.0))
    assert sorted(map(str, segments(found))) == sorted(map(str, [c for c, _ in causes]))


# Success rate of video plays per CDN, bitrate, p2p and device (the RS benchmark's shape).
VIDEO = {
    "cdn": ["3", "5", "7", "8"],
    "bitrate": ["500", "1200", "2000", "2500", "4000"],
    "p2p": ["0", "1"],
    "device": ["C1", "C2", "C3", "C8"],
}
REACTION = {"C1": 1.0, "C2": 0.5, "C3": 0.25, "C8": 0.0}


def plays(
    causes: list[tuple[dict[str, str], float]],
    *,
    seed: int,
    drift: float = 0.0,
    p2p_share: float = 0.5,
) -> pd.DataFrame:
    """Plays and successful plays per leaf, this minute vs the previous one.

    Each cause adds failures to its leaves by device: C1 reacts fully, C2 and C3 less, C8 not at
    all (and it rarely fails). `drift` makes every leaf's failure rate wander by that relative
    amount between the two minutes, as real rates do.
    """
    rng = np.random.default_rng(seed)
    leaves = pd.DataFrame(list(itertools.product(*VIDEO.values())), columns=list(VIDEO))
    share = np.where(leaves["p2p"] == "1", p2p_share, 1.0 - p2p_share) * 2.0
    size = 300.0 * rng.lognormal(0.0, 1.0, len(leaves)) * share
    fail = np.where(leaves["device"] == "C8", 0.0005, rng.uniform(0.005, 0.03, len(leaves)))
    now = fail * np.exp(drift * rng.normal(size=len(leaves)))
    reaction = leaves["device"].map(REACTION).to_numpy(float)
    for segment, extra in causes:
        mask = in_segment(leaves, segment)
        now[mask] += extra * reaction[mask]
    leaves["plays_prev"] = rng.poisson(size).astype(float)
    leaves["plays_last"] = rng.poisson(size).astype(float)
    leaves["ok_prev"] = leaves["plays_prev"] - rng.binomial(leaves["plays_prev"].astype(int), fail)
    failed = rng.binomial(leaves["plays_last"].astype(int), np.clip(now, 0.0, 1.0))
    leaves["ok_last"] = leaves["plays_last"] - failed
    return leaves


def run_plays(frame: pd.DataFrame) -> list[Element]:
    return localize_ratio(frame, list(VIDEO), "ok_last", "ok_prev", "plays_last", "plays_prev")


def test_success_rate_parent_whose_devices_react_unequally_is_the_parent() -> None:
    # bitrate=2000 fails: C1 badly, C2 and C3 less, C8 not at all. The fault is the bitrate's,
    # not the device's: most of its devices moved, each by its own amount.
    found = run_plays(plays([({"bitrate": "2000"}, 0.3)], seed=30))
    assert segments(found) == [{"bitrate": "2000"}]
    assert found[0].actual < found[0].expected and found[0].change < 0


@pytest.mark.parametrize("seed", [30, 35, 57])
def test_success_rate_weak_fault_with_one_sibling_moved_and_one_spared_is_the_parent(seed: int) -> None:
    # bitrate=2000 fails by 3 points: C1 fully, C2 by half, C3 by a quarter, C8 not at all. The
    # best fit is bitrate=2000 & C1; beside it C2 moved, C3 is too small to tell, C8 stayed put.
    # One sibling moved, one was spared, the siblings together moved: nothing shows that the
    # bitrate's other devices were spared, so the shorter name is the cause (the old rule kept
    # C1 on such a tie, and asked the siblings together for 3 noise units, not 2).
    found = run_plays(plays([({"bitrate": "2000"}, 0.03)], seed=seed))
    assert segments(found) == [{"bitrate": "2000"}]
    assert found[0].change < 0


@pytest.mark.parametrize("seed", [30, 39, 42])
def test_success_rate_child_that_carries_the_whole_move_is_the_child(seed: int) -> None:
    # Only the p2p plays of bitrate=2000 fail: the other half of that bitrate stayed as
    # expected, so neither bitrate=2000 nor p2p=1 is the cause.
    found = run_plays(plays([({"bitrate": "2000", "p2p": "1"}, 0.3)], seed=seed))
    assert segments(found) == [{"bitrate": "2000", "p2p": "1"}]


@pytest.mark.parametrize("seed", [30, 31])
def test_success_rate_two_causes_under_one_broad_segment_are_both_found(seed: int) -> None:
    # p2p=1 holds 90 % of the plays and so most of both failures: it is not a cause itself.
    causes = [({"bitrate": "2500"}, 0.3), ({"bitrate": "500"}, 0.2)]
    found = run_plays(plays(causes, seed=seed, p2p_share=0.9))
    assert sorted(map(str, segments(found))) == sorted(map(str, [c for c, _ in causes]))


def test_success_rate_one_failed_play_is_not_an_element() -> None:
    frame = plays([], seed=33)
    one = {"cdn": "9", "bitrate": "500", "p2p": "0", "device": "C1"}
    frame.loc[len(frame)] = {**one, "plays_prev": 1.0, "plays_last": 1.0, "ok_prev": 1.0, "ok_last": 0.0}
    assert run_plays(frame) == []


@pytest.mark.parametrize("seed", range(34, 38))
def test_success_rate_with_drifting_rates_and_nothing_planted_gives_nothing(seed: int) -> None:
    assert run_plays(plays([], seed=seed, drift=0.3)) == []


@pytest.mark.parametrize("seed", range(38, 41))
def test_conversion_with_drifting_rates_and_nothing_planted_gives_nothing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    frame = weekly([], seed=seed, scale=500.0)
    rate = rng.uniform(0.01, 0.2, len(frame))
    drifted = np.clip(rate * np.exp(0.2 * rng.normal(size=len(frame))), 0.0, 1.0)
    frame["orders_prev"] = rng.binomial(frame["prev"].astype(int), rate).astype(float)
    frame["orders_last"] = rng.binomial(frame["last"].astype(int), drifted).astype(float)
    assert localize_ratio(frame, list(DIMS), "orders_last", "orders_prev", "last", "prev") == []


def test_loss_making_leaves_are_weighed_not_ignored() -> None:
    """A profit cube where one region loses money: its losses deepening is a cause like any other
    (noise grows with the size of a leaf's flows, whatever their sign)."""
    rng = np.random.default_rng(5)
    rows = []
    for region in ["north", "south", "east", "west"]:
        for shop in range(12):
            base = -400.0 if region == "west" else 1000.0 + 50 * shop
            drop = -300.0 if region == "west" else 0.0
            real = base + drop + rng.normal(0, 8)
            rows.append({"region": region, "shop": f"s{shop}", "predict": base, "real": real})
    found = localize(pd.DataFrame(rows), ["region", "shop"])
    assert [e.segment for e in found] == [{"region": "west"}]
    assert found[0].share == pytest.approx(1.0, abs=0.05)


def cdn_plays(seed: int, faults: dict[tuple[tuple[str, str], ...], float], *, drop: int = 0) -> pd.DataFrame:
    """Plays and successes per cdn, bitrate and p2p; each fault lowers its leaves' success rate.

    A fault's value is subtracted from the success rate; a negative value instead keeps that
    share at random (0..1) of each leaf's successes, as real outages reach leaves unequally.
    `drop` removes that many p2p=1 leaves, so that p2p=0 holds most of the cube.
    """
    rng = np.random.default_rng(seed)
    values = [["1", "3", "5", "7"], ["500", "1200", "2000", "4000"], ["0", "1"]]
    leaves = pd.DataFrame(list(itertools.product(*values)), columns=["cdn", "bitrate", "p2p"])
    if drop:
        leaves = leaves.drop(index=rng.choice(np.flatnonzero(leaves["p2p"] == "1"), drop, replace=False))
    n = len(leaves)
    plays = rng.integers(20_000, 60_000, n).astype(float)
    ok = rng.uniform(0.9, 0.99, n)
    now = ok.copy()
    for fault, size in faults.items():
        mask = np.logical_and.reduce([(leaves[k] == v).to_numpy() for k, v in fault])
        now[mask] = now[mask] * rng.uniform(0.0, 1.0, int(mask.sum())) if size < 0 else now[mask] - size
    leaves["plays_prev"] = leaves["plays_last"] = plays
    leaves["ok_prev"] = rng.binomial(plays.astype(int), ok).astype(float)
    leaves["ok_last"] = rng.binomial(plays.astype(int), np.clip(now, 0.0, 1.0)).astype(float)
    return leaves


def run_cdn(frame: pd.DataFrame) -> list[Element]:
    return localize_ratio(frame, ["cdn", "bitrate", "p2p"], "ok_last", "ok_prev", "plays_last", "plays_prev")


def test_success_rate_outage_reaching_most_leaves_is_found() -> None:
    # p2p=0 holds 16 of the 26 leaves, and each of them lost a random part of its successes:
    # a spread measured over all leaves takes the outage for drift (6 of these 20 cubes gave
    # nothing so), a spread measured outside the outage does not.
    for seed in range(20):
        found = run_cdn(cdn_plays(seed, {(("p2p", "0"),): -1.0}, drop=6))
        assert segments(found) == [{"p2p": "0"}], seed
        assert found[0].change < 0 and found[0].share > 0.9


@pytest.mark.parametrize("seed", range(4))
def test_success_rate_remainder_under_a_tenth_of_the_change_is_not_a_cause(seed: int) -> None:
    # bitrate=2000 lost 20 points; cdn=7 bitrate=500 lost 2, significant on 100k plays but about
    # 3 % of the change: nothing an analyst acts on next to the outage.
    faults = {(("bitrate", "2000"),): 0.2, (("cdn", "7"), ("bitrate", "500")): 0.02}
    assert segments(run_cdn(cdn_plays(seed, faults))) == [{"bitrate": "2000"}]


@pytest.mark.parametrize("seed", range(4))
def test_success_rate_second_fault_over_a_tenth_of_the_change_is_found(seed: int) -> None:
    faults = {(("bitrate", "2000"),): 0.2, (("cdn", "7"), ("bitrate", "500")): 0.2}
    found = run_cdn(cdn_plays(seed, faults))
    expected = [{"bitrate": "2000"}, {"cdn": "7", "bitrate": "500"}]
    assert sorted(map(str, segments(found))) == sorted(map(str, expected))


@pytest.mark.parametrize("seed", range(43, 46))
def test_success_rate_element_is_named_by_every_value_its_leaves_share(seed: int) -> None:
    # cdn=9 only serves p2p=0 plays, and all of them fail more. cdn=9 and cdn=9 & p2p=0 are the
    # same leaves; which name the search reaches depends on its path, and the longer one is what
    # an analyst writes down (all of the failing traffic is p2p=0), so it is the one reported.
    frame = plays([], seed=seed)
    extra = plays([({}, 0.3)], seed=seed + 100).assign(cdn="9")
    extra = extra[extra["p2p"] == "0"]
    found = run_plays(pd.concat([frame, extra], ignore_index=True))
    assert segments(found) == [{"cdn": "9", "p2p": "0"}]
    assert found[0].change < 0
