"""Greedy, vectorised search for the elements that explain a leaf-level deviation.

Model: inside a root-cause element every leaf moves by one common factor (the ripple effect),
outside it leaves follow their expectation up to noise. Each candidate element is scored by how
much its one-parameter fit lowers the noise-weighted squared error of its leaves (a chi-square
statistic); the best significant element is taken, its leaves are set aside, and the search
repeats. All candidates of one cuboid (a combination of attributes) are scored with `bincount`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

_MAD_TO_SIGMA = 1.4826
_CHI2_1_MEDIAN = 0.4549
_MIN_NULL_CANDIDATES = 20


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the search; defaults work for forecasts and for week-over-week comparisons."""

    max_elements: int = 3
    max_depth: int = 3
    # An element must beat the largest noise-only chi-square expected among all candidates by
    # this many units (chi-square of 1 dof), so pure noise yields nothing.
    margin: float = 12.0
    # An ancestor (fewer attributes) replaces the best element when it keeps this share of its gain.
    parent_keep: float = 0.9
    # A parent replaces the element when leaves holding this share of the rest of the parent's
    # level moved the same way by at least `sibling_z` noise units each.
    sibling_share: float = 0.5
    sibling_z: float = 3.0
    # Later elements must reach this fraction of the first element's gain.
    min_relative_gain: float = 0.005


@dataclass(frozen=True)
class Found:
    """One selected element: which attributes (by position), the leaves it covers, its gain."""

    cuboid: tuple[int, ...]
    mask: np.ndarray
    gain: float


@dataclass(frozen=True)
class _Cuboid:
    attrs: tuple[int, ...]
    gid: np.ndarray
    n_groups: int


def noise_weights(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Inverse noise variance per leaf, var = s² · m^p with m the leaf's mean level.

    p (1 = Poisson-like, 2 = multiplicative) and s are estimated robustly from the leaves, so
    forecasts with relative error and raw counts week-over-week are both weighted sensibly.
    """
    level = (actual + expected) / 2.0
    pos = level > 0
    weights: np.ndarray = np.zeros_like(level)
    if not pos.any():
        return weights
    resid = np.abs(actual - expected)[pos]
    power = _variance_power(level[pos], resid)
    scaled = (actual - expected)[pos] / level[pos] ** (power / 2.0)
    spread = _MAD_TO_SIGMA * float(np.median(np.abs(scaled - np.median(scaled))))
    floor = 1e-3 * float(np.median(level[pos] ** (1.0 - power / 2.0)))
    sigma = max(spread, floor, 1e-12)
    weights[pos] = 1.0 / (sigma**2 * level[pos] ** power)
    return weights


def _variance_power(level: np.ndarray, resid: np.ndarray) -> float:
    """Slope of log |residual| on log level, doubled: how noise grows with the leaf's size."""
    nz = resid > 0
    if nz.sum() < 10 or np.ptp(np.log(level[nz])) < 1.0:
        return 1.5
    log_m, log_r = np.log(level[nz]), np.log(resid[nz])
    keep = np.ones(len(log_m), dtype=bool)
    for _ in range(2):  # refit without the leaves far off the line (anomalies)
        slope, icpt = np.polyfit(log_m[keep], log_r[keep], 1)
        off = log_r - (slope * log_m + icpt)
        keep = np.abs(off - np.median(off)) < 2.5 * _MAD_TO_SIGMA * np.median(np.abs(off))
    return float(np.clip(2.0 * slope, 1.0, 2.0))


def build_cuboids(codes: np.ndarray, max_depth: int) -> list[_Cuboid]:
    """Group ids of every leaf for each combination of up to `max_depth` attributes."""
    n_dims = codes.shape[1]
    single = [pd.factorize(codes[:, j])[0] for j in range(n_dims)]
    cuboids: list[_Cuboid] = []
    for depth in range(1, min(max_depth, n_dims) + 1):
        for attrs in combinations(range(n_dims), depth):
            gid = single[attrs[0]].astype(np.int64)
            for j in attrs[1:]:
                gid = pd.factorize(gid * (single[j].max() + 1) + single[j])[0].astype(np.int64)
            cuboids.append(_Cuboid(attrs, gid, int(gid.max()) + 1 if len(gid) else 0))
    return cuboids


def _gains(cub: _Cuboid, wxy: np.ndarray, wxx: np.ndarray, wyy: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Chi-square gain of fitting one factor per element (all of it for brand-new elements)."""
    sxy = np.bincount(cub.gid, wxy, cub.n_groups)
    sxx = np.bincount(cub.gid, wxx, cub.n_groups)
    syy = np.bincount(cub.gid, wyy, cub.n_groups)
    sx = np.bincount(cub.gid, x, cub.n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(sxx > 0, sxy**2 / sxx, 0.0)
    gains: np.ndarray = np.where(sx > 0, fit, syy)
    return gains


def _root_gain(wxy: np.ndarray, wxx: np.ndarray, wyy: np.ndarray, x: np.ndarray) -> float:
    """Gain of one factor for all remaining leaves: a change spread evenly everywhere."""
    if x.sum() <= 0:
        return float(wyy.sum())
    sxx = wxx.sum()
    return float(wxy.sum() ** 2 / sxx) if sxx > 0 else 0.0


def search(
    codes: np.ndarray,
    actual: np.ndarray,
    expected: np.ndarray,
    options: SearchOptions,
) -> list[Found]:
    """Pick up to `max_elements` elements, most explanatory first; [] for noise or broad moves."""
    weights = noise_weights(actual, expected)
    cuboids = build_cuboids(codes, options.max_depth)
    threshold = _noise_threshold(cuboids, options.margin)
    active = weights > 0
    found: list[Found] = []
    first_gain = 0.0
    while len(found) < options.max_elements and active.any():
        step = _best_element(cuboids, actual, expected, weights * active, active)
        if step is None:
            break
        gain, root, cub_idx, group, per_cuboid = step
        noise = _overdispersion(cuboids, per_cuboid, cuboids[cub_idx].gid == group)
        # Stop on noise, on a move better explained everywhere at once, or on crumbs.
        if gain < threshold * noise or root >= gain or gain < options.min_relative_gain * first_gain:
            break
        cub_idx, group = _prefer_ancestor(cuboids, cub_idx, group, per_cuboid, options.parent_keep)
        cub_idx, group = _climb_broad_parents(
            cuboids,
            cub_idx,
            group,
            (actual + expected) * active,
            (actual - expected) * np.sqrt(weights) * active,
            options,
        )
        mask = cuboids[cub_idx].gid == group
        found.append(Found(cuboids[cub_idx].attrs, mask, float(per_cuboid[cub_idx][group])))
        first_gain = first_gain or gain
        active &= ~mask
    return found


def _overdispersion(
    cuboids: Sequence[_Cuboid],
    per_cuboid: Sequence[np.ndarray],
    best: np.ndarray,
) -> float:
    """How much larger typical candidate gains are than chi-square(1) noise (at least 1).

    Real data often has noise shared by neighbouring leaves (a whole CDN wobbles), which
    leaf-level residuals cannot see. Candidates with evidence that do not touch the best
    element are mostly null, so their median gain reveals it.
    """
    null = [
        gains[(gains > 0) & (np.bincount(c.gid, best, c.n_groups) == 0)]
        for c, gains in zip(cuboids, per_cuboid, strict=True)
    ]
    gains = np.concatenate(null)
    if gains.size < _MIN_NULL_CANDIDATES:
        return 1.0
    return max(1.0, float(np.median(gains)) / _CHI2_1_MEDIAN)


def _noise_threshold(cuboids: Sequence[_Cuboid], margin: float) -> float:
    """Largest chi-square(1) that noise alone reaches among this many candidates, plus margin."""
    n_candidates = max(sum(c.n_groups for c in cuboids), 2)
    return 2.0 * float(np.log(n_candidates)) + margin


def _best_element(
    cuboids: Sequence[_Cuboid],
    actual: np.ndarray,
    expected: np.ndarray,
    weights: np.ndarray,
    active: np.ndarray,
) -> tuple[float, float, int, int, list[np.ndarray]] | None:
    """Score every candidate over the active leaves; return the best and all cuboid gains."""
    x = expected * active
    y = (actual - expected) * active
    wxy, wxx, wyy = weights * x * y, weights * x * x, weights * y * y
    per_cuboid = [_gains(c, wxy, wxx, wyy, x) for c in cuboids]
    best = max(range(len(cuboids)), key=lambda i: per_cuboid[i].max(initial=0.0))
    if per_cuboid[best].size == 0:
        return None
    group = int(per_cuboid[best].argmax())
    gain = float(per_cuboid[best][group])
    return gain, _root_gain(wxy, wxx, wyy, x), best, group, per_cuboid


def _prefer_ancestor(
    cuboids: Sequence[_Cuboid],
    cub_idx: int,
    group: int,
    per_cuboid: Sequence[np.ndarray],
    keep: float,
) -> tuple[int, int]:
    """Shallowest ancestor that explains nearly as much: its extra leaves carry no evidence."""
    attrs = set(cuboids[cub_idx].attrs)
    leaf = int(np.flatnonzero(cuboids[cub_idx].gid == group)[0])
    target = keep * float(per_cuboid[cub_idx][group])
    choice = (len(attrs), -float(per_cuboid[cub_idx][group]), cub_idx, group)
    for i, cub in enumerate(cuboids):
        if set(cub.attrs) < attrs:
            anc_group = int(cub.gid[leaf])
            anc_gain = float(per_cuboid[i][anc_group])
            if anc_gain >= target:
                choice = min(choice, (len(cub.attrs), -anc_gain, i, anc_group))
    return choice[2], choice[3]


def _climb_broad_parents(
    cuboids: Sequence[_Cuboid],
    cub_idx: int,
    group: int,
    level: np.ndarray,
    zscore: np.ndarray,
    options: SearchOptions,
) -> tuple[int, int]:
    """Move up to a parent while most of its other children moved the same way.

    The one-factor fit favours the child that moved most; when its siblings moved too (by other
    amounts) the root cause is the parent, as the ripple effect of a parent-level fault.
    """
    index = {c.attrs: i for i, c in enumerate(cuboids)}
    climbed = True
    while climbed and len(cuboids[cub_idx].attrs) > 1:
        climbed = False
        cub = cuboids[cub_idx]
        in_elem = cub.gid == group
        for attr in cub.attrs:
            p_idx = index[tuple(a for a in cub.attrs if a != attr)]
            p_group = int(cuboids[p_idx].gid[np.flatnonzero(in_elem)[0]])
            parent = cuboids[p_idx].gid == p_group
            if _siblings_agree(cub, group, parent, level, zscore, options):
                cub_idx, group, climbed = p_idx, p_group, True
                break
    return cub_idx, group


def _siblings_agree(
    cub: _Cuboid,
    group: int,
    parent_mask: np.ndarray,
    level: np.ndarray,
    zscore: np.ndarray,
    options: SearchOptions,
) -> bool:
    """Whether most of the siblings' level sits in leaves that moved significantly alike.

    Judged per leaf, so a sibling touched by another, narrower cause does not count as moved.
    """
    in_elem = cub.gid == group
    sib = parent_mask & ~in_elem
    total = level[sib].sum()
    if total <= 0:
        return False
    direction = np.sign(zscore[in_elem].sum())
    moved = sib & (direction * zscore >= options.sibling_z)
    return bool(level[moved].sum() >= options.sibling_share * total)
