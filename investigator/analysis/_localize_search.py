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
    weights = np.zeros_like(level)
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


def _variance_power(level: np.ndarray, resid: np.ndarray, n_bins: int = 10) -> float:
    """Slope of log |residual| on log level, doubled: how noise grows with the leaf's size."""
    nz = resid > 0
    if nz.sum() < 5 * n_bins:
        return 1.5
    log_m, log_r = np.log(level[nz]), np.log(resid[nz])
    edges = np.quantile(log_m, np.linspace(0.0, 1.0, n_bins + 1))
    bins = np.clip(np.searchsorted(edges, log_m, side="right") - 1, 0, n_bins - 1)
    frame = pd.DataFrame({"bin": bins, "m": log_m, "r": log_r}).groupby("bin").median()
    if len(frame) < 3 or np.ptp(frame["m"].to_numpy()) < 1.0:
        return 1.5
    slope = float(np.polyfit(frame["m"].to_numpy(), frame["r"].to_numpy(), 1)[0])
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


def _gains(cub: _Cuboid, wxy: np.ndarray, wxx: np.ndarray, wyy: np.ndarray, x: np.ndarray):
    """Chi-square gain of fitting one factor per element (all of it for brand-new elements)."""
    sxy = np.bincount(cub.gid, wxy, cub.n_groups)
    sxx = np.bincount(cub.gid, wxx, cub.n_groups)
    syy = np.bincount(cub.gid, wyy, cub.n_groups)
    sx = np.bincount(cub.gid, x, cub.n_groups)
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(sxx > 0, sxy**2 / sxx, 0.0)
    return np.where(sx > 0, fit, syy)


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
        if gain < threshold or root >= gain or gain < options.min_relative_gain * first_gain:
            break
        cub_idx, group = _prefer_ancestor(cuboids, cub_idx, group, per_cuboid, options.parent_keep)
        mask = cuboids[cub_idx].gid == group
        found.append(Found(cuboids[cub_idx].attrs, mask, float(per_cuboid[cub_idx][group])))
        first_gain = first_gain or gain
        active &= ~mask
    return found


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
