"""Greedy, vectorised search for the elements that explain a leaf-level deviation.

Model: inside a root-cause element every leaf moves by one common effect (the ripple effect),
outside it leaves follow their expectation up to noise. A leaf's response to a unit effect is its
`design` value: its expected value for an additive metric (one common factor), n·p(1-p) for a
proportion (one common shift of the odds). Each candidate element is scored by how much its
one-parameter fit lowers the noise-weighted squared error of its leaves (a chi-square statistic,
`_localize_scoring`; the noise each leaf is weighed by: `_localize_noise`); the best significant
element is taken, its depth settled (`_localize_depth`), its leaves set aside, and the search
repeats. Once all elements are found, each one's depth is settled again without the leaves of the
others, so that a cause found later does not pass for its neighbours'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._localize_depth import _everywhere, _settle_depth
from ._localize_noise import _noise_threshold, _overdispersion, _quiet_weights, model_weights, noise_weights
from ._localize_options import SearchOptions
from ._localize_scoring import _best_element, _Cuboid, _Leaves, _leaves, _sign, _z, build_cuboids


@dataclass(frozen=True)
class Found:
    """One selected element: which attributes (by position), the leaves it covers, its gain."""

    cuboid: tuple[int, ...]
    mask: np.ndarray
    gain: float


def search(
    codes: np.ndarray,
    actual: np.ndarray,
    expected: np.ndarray,
    options: SearchOptions,
    variance: np.ndarray | None = None,
    design: np.ndarray | None = None,
) -> list[Found]:
    """Pick up to `max_elements` elements, most explanatory first; [] for noise or broad moves.

    `variance` is the leaves' noise variance when a model of it is known (else it is estimated
    from the leaves); `design` each leaf's deviation under a unit common effect (default: its
    expected value, one common factor).
    """
    resid = actual - expected
    weights = noise_weights(actual, expected) if variance is None else model_weights(resid, variance)
    x_fit = expected if design is None else design
    cuboids = build_cuboids(codes, options.max_depth)
    if variance is not None:
        weights = _quiet_weights(cuboids, resid, x_fit, weights, variance)
    index = {c.attrs: i for i, c in enumerate(cuboids)}
    threshold = _noise_threshold(cuboids, options.margin)
    valid = weights > 0
    active = valid.copy()
    total = float(resid[valid].sum())
    found: list[Found] = []
    first_gain = first_noise = 0.0
    while len(found) < options.max_elements and active.any():
        step = _best_element(cuboids, _leaves(resid, x_fit, weights, active, 1.0))
        if step is None:
            break
        gain, root, cub_idx, group, per_cuboid = step
        noise = _overdispersion(cuboids, per_cuboid, cuboids[cub_idx].gid == group)
        # Stop on noise or on crumbs.
        if gain < threshold * noise or gain < options.min_relative_gain * first_gain:
            break
        leaves = _leaves(resid, x_fit, weights, active, noise)
        # Stop on a move that reached everything alike (broad-based, not a segment's).
        if root >= gain and _everywhere(cuboids, index, leaves, options.part_z):
            break
        cub_idx, group = _settle_depth(cuboids, index, (cub_idx, group), leaves, threshold * noise, options)
        mask = cuboids[cub_idx].gid == group
        if found and abs(float(resid[mask & active].sum())) < options.min_share * abs(total):
            break
        found.append(Found(cuboids[cub_idx].attrs, mask, float(per_cuboid[cub_idx][group])))
        first_gain, first_noise = first_gain or gain, first_noise or noise
        active &= ~mask
    if not found:
        return found
    every = _leaves(resid, x_fit, weights, valid, first_noise)
    found = _resettle(found, cuboids, index, every, threshold * first_noise, options)
    return _drop_redundant(found, every, options.part_z)


def _resettle(
    found: list[Found],
    cuboids: Sequence[_Cuboid],
    index: dict[tuple[int, ...], int],
    leaves: _Leaves,
    min_gain: float,
    options: SearchOptions,
) -> list[Found]:
    """Each element's depth settled again with the other elements' leaves out of play.

    During the greedy pass, causes not found yet still sit in an element's parent and children
    and can pass for its own (a moved sibling that is really a later, cross-cutting cause).
    """
    if len(found) < 2:
        return found
    out: list[Found] = []
    for i, elem in enumerate(found):
        others = np.logical_or.reduce([f.mask for j, f in enumerate(found) if j != i])
        own = leaves.only(~others)
        start = (index[elem.cuboid], int(cuboids[index[elem.cuboid]].gid[np.flatnonzero(elem.mask)[0]]))
        if not (elem.mask & (own.var > 0)).any():
            out.append(elem)
            continue
        cub_idx, group = _settle_depth(cuboids, index, start, own, min_gain, options)
        if (cub_idx, group) == start:
            out.append(elem)
            continue
        mask = cuboids[cub_idx].gid == group
        gain = float(own.gains(cuboids[cub_idx].gid, mask, cuboids[cub_idx].n_groups)[group])
        out.append(Found(cuboids[cub_idx].attrs, mask, gain))
    unique: dict[tuple[tuple[int, ...], bytes], Found] = {}
    for f in out:
        unique.setdefault((f.cuboid, np.packbits(f.mask).tobytes()), f)
    return list(unique.values())


def _drop_redundant(found: list[Found], leaves: _Leaves, z: float) -> list[Found]:
    """Without elements whose leaves outside the other elements did not move significantly.

    A broad element taken first can gather the moves of narrower causes found after it; its
    own part then carries nothing that the narrower elements do not already report.
    """
    kept = list(found)
    dropped = True
    while dropped and len(kept) > 1:
        dropped = False
        for i, elem in enumerate(kept):
            others = np.logical_or.reduce([f.mask for j, f in enumerate(kept) if j != i])
            own = elem.mask & ~others & (leaves.var > 0)
            sign = _sign(float(leaves.dev[elem.mask].sum()))
            if abs(float(_z(sign * leaves.dev[own].sum(), leaves.var[own].sum()))) < z:
                del kept[i]
                dropped = True
                break
    return kept
