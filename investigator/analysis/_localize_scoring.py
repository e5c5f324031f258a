"""Scoring the candidate elements of a localization search, all of one cuboid at once.

A cuboid is a combination of attributes; its candidates are its groups of leaves. Each candidate
is scored by how much one common effect over its leaves lowers their noise-weighted squared error
(a chi-square gain), with `bincount` over group ids, shallower cuboids from the sums of deeper ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class _Cuboid:
    attrs: tuple[int, ...]
    gid: np.ndarray
    """Group id of every leaf."""
    n_groups: int
    source: int
    """Position of the cuboid (one attribute more) summed into this one; -1: the leaves."""
    roll: np.ndarray
    """This cuboid's group id of each group of `source`."""


@dataclass(frozen=True)
class _Leaves:
    """Per-leaf quantities of one search step, zero outside the leaves in play."""

    dev: np.ndarray
    """actual - expected."""
    design: np.ndarray
    """Deviation that a unit common effect would cause."""
    weight: np.ndarray
    """Inverse leaf noise variance."""
    var: np.ndarray
    """Noise variance with the candidates' overdispersion: what part tests divide by."""

    def sums(self, gid: np.ndarray, part: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Deviation, design and variance of `part`'s leaves, summed per group id."""
        g = gid[part]
        return (
            np.bincount(g, self.dev[part], n),
            np.bincount(g, self.design[part], n),
            np.bincount(g, self.var[part], n),
        )

    def gains(self, gid: np.ndarray, part: np.ndarray, n: int) -> np.ndarray:
        """`_gains` of the groups of `part`'s leaves."""
        g, w, x, y = gid[part], self.weight[part], self.design[part], self.dev[part]
        sums = [np.bincount(g, col, n) for col in (w * x * y, w * x * x, w * y * y, x)]
        return _gains(*sums)

    def only(self, part: np.ndarray) -> _Leaves:
        """The same leaves with everything outside `part` out of play."""
        return _Leaves(self.dev * part, self.design * part, self.weight * part, self.var * part)


def build_cuboids(codes: np.ndarray, max_depth: int) -> list[_Cuboid]:
    """Group ids of every leaf for each combination of up to `max_depth` attributes.

    Each cuboid below the deepest level also records how to sum it from the cheapest cuboid
    with one attribute more, so most per-candidate sums run over groups rather than leaves.
    """
    n_leaves, n_dims = codes.shape
    single = [pd.factorize(codes[:, j])[0] for j in range(n_dims)]
    groups: list[tuple[tuple[int, ...], np.ndarray]] = []
    for depth in range(1, min(max_depth, n_dims) + 1):
        for attrs in combinations(range(n_dims), depth):
            gid = single[attrs[0]].astype(np.int64)
            for j in attrs[1:]:
                gid = pd.factorize(gid * (single[j].max(initial=0) + 1) + single[j])[0].astype(np.int64)
            groups.append((attrs, gid))
    sizes = {attrs: int(gid.max()) + 1 if n_leaves else 0 for attrs, gid in groups}
    position = {attrs: i for i, (attrs, _) in enumerate(groups)}
    cuboids: list[_Cuboid] = []
    for attrs, gid in groups:
        finer = [a for a in sizes if len(a) == len(attrs) + 1 and set(attrs) < set(a)]
        if not finer or not n_leaves:
            cuboids.append(_Cuboid(attrs, gid, sizes[attrs], -1, np.empty(0, np.int64)))
            continue
        source = min(finer, key=lambda a: sizes[a])
        source_gid = groups[position[source]][1]
        first = np.empty(sizes[source], np.int64)
        first[source_gid[::-1]] = np.arange(n_leaves - 1, -1, -1)
        cuboids.append(_Cuboid(attrs, gid, sizes[attrs], position[source], gid[first]))
    return cuboids


def _cuboid_sums(cuboids: Sequence[_Cuboid], columns: Sequence[np.ndarray]) -> list[list[np.ndarray]]:
    """Per cuboid, each column summed per group (deepest cuboids from the leaves)."""
    out: list[list[np.ndarray]] = [[] for _ in cuboids]
    for i in range(len(cuboids) - 1, -1, -1):  # sources are deeper, hence later in the list
        cub = cuboids[i]
        if cub.source < 0:
            out[i] = [np.bincount(cub.gid, col, cub.n_groups) for col in columns]
        else:
            out[i] = [np.bincount(cub.roll, col, cub.n_groups) for col in out[cub.source]]
    return out


def _gains(sxy: np.ndarray, sxx: np.ndarray, syy: np.ndarray, sx: np.ndarray) -> np.ndarray:
    """Chi-square gain of fitting one effect per element (all of it for brand-new elements)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        fit = np.where(sxx > 0, sxy**2 / np.where(sxx > 0, sxx, 1.0), 0.0)
    gains: np.ndarray = np.where(sx > 0, fit, syy)
    return gains


def _best_element(
    cuboids: Sequence[_Cuboid], leaves: _Leaves
) -> tuple[float, float, int, int, list[np.ndarray]] | None:
    """Score every candidate over the leaves in play: the best gain, the gain of one effect
    for all of them at once, the best candidate and all cuboid gains."""
    w, x, y = leaves.weight, leaves.design, leaves.dev
    columns = [w * x * y, w * x * x, w * y * y, x]
    per_cuboid = [_gains(*sums) for sums in _cuboid_sums(cuboids, columns)]
    best = max(range(len(cuboids)), key=lambda i: per_cuboid[i].max(initial=0.0))
    if per_cuboid[best].size == 0:
        return None
    group = int(per_cuboid[best].argmax())
    root = _gains(*(np.array([col.sum()]) for col in columns))
    return float(per_cuboid[best][group]), float(root[0]), best, group, per_cuboid


def _leaves(
    dev: np.ndarray, design: np.ndarray, weights: np.ndarray, live: np.ndarray, noise: float
) -> _Leaves:
    """The leaves in `live` in play, their variance widened by the candidates' overdispersion."""
    w = weights * live
    with np.errstate(divide="ignore"):
        var = np.where(w > 0, noise / np.where(w > 0, w, 1.0), 0.0)
    return _Leaves(dev * live, design * live, w, var)


def _z(dev: np.ndarray | float, var: np.ndarray | float) -> np.ndarray:
    """dev / sqrt(var), 0 where there is no variance."""
    dev_a, var_a = np.asarray(dev, dtype=float), np.asarray(var, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(var_a > 0, dev_a / np.sqrt(np.where(var_a > 0, var_a, 1.0)), 0.0)
    return out


def _sign(value: float) -> float:
    return -1.0 if value < 0 else 1.0
