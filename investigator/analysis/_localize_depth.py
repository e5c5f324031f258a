"""Settling the depth of a found element: the level of the hierarchy the evidence supports.

The best fit favours whichever level of the hierarchy moved most cleanly, which is not always the
cause (children of a faulty parent react unequally; two causes sit under one broad segment). So the
chosen element is compared with its parents and children part by part, each part judged in its own
noise units (`_settle_depth`): up to a parent when that parent's other children moved too, at
least as many as verifiably stayed put; down to a child when the child carries the move and the rest
of the element stayed as expected, or when more of the element's parts along some attribute
verifiably stayed put than moved. On even evidence the shorter name wins: it claims less.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._localize_options import SearchOptions
from ._localize_scoring import _Cuboid, _Leaves, _sign, _z


def _settle_depth(
    cuboids: Sequence[_Cuboid],
    index: dict[tuple[int, ...], int],
    start: tuple[int, int],
    leaves: _Leaves,
    min_gain: float,
    options: SearchOptions,
) -> tuple[int, int]:
    """Walk from the best-fitting element to the level of the hierarchy the evidence supports.

    Up while a parent's other children moved with the element, else down while a child holds
    the move. Every step is a test in the leaves' own noise units, not a share or a depth
    constant, so it reads the same on a 20-leaf cube and a 100k-leaf one; a step never returns
    to an element already visited, nor goes down to a child that noise alone could explain
    (gain below `min_gain`).
    """
    cub_idx, group = start
    seen = {start}
    for _ in range(4 * options.max_depth):
        step = _climb(cuboids, index, cub_idx, group, leaves, options.part_z, options.pooled_z)
        if step is None and len(cuboids[cub_idx].attrs) < options.max_depth:
            step = _descend(cuboids, index, cub_idx, group, leaves, min_gain, options.part_z)
        if step is None or step in seen:
            break
        seen.add(step)
        cub_idx, group = step
    return cub_idx, group


def _climb(
    cuboids: Sequence[_Cuboid],
    index: dict[tuple[int, ...], int],
    cub_idx: int,
    group: int,
    leaves: _Leaves,
    z: float,
    pooled_z: float,
) -> tuple[int, int] | None:
    """The parent whose other children moved with the element, if any (the most significant).

    Those siblings must have moved in the element's direction taken together (`pooled_z`: one
    test of them all, not one per part), and at least as many of them must have moved as
    verifiably stayed put: a parent-level fault reaches most of its children (by different
    amounts: devices do not all react alike), while one moved sibling among several that stayed
    is a separate, narrower cause that a later step finds. When the parts are even, the parent
    is kept: the longer name would claim that the siblings were spared, which the data does not
    show.
    """
    cub = cuboids[cub_idx]
    if len(cub.attrs) < 2:
        return None
    elem = cub.gid == group
    sign, effect = _direction(elem, leaves)
    first = int(np.flatnonzero(elem)[0])
    best: tuple[float, int, int] | None = None
    for attr in cub.attrs:
        p_idx = index[tuple(a for a in cub.attrs if a != attr)]
        p_group = int(cuboids[p_idx].gid[first])
        rest = (cuboids[p_idx].gid == p_group) & ~elem & (leaves.var > 0)
        if not rest.any():  # nothing else under the parent: the shorter name says the same
            return p_idx, p_group
        by_value = cuboids[index[(attr,)]]
        dev, design, var = leaves.sums(by_value.gid, rest, by_value.n_groups)
        together = float(_z(sign * dev.sum(), var.sum()))
        moved, stayed = _judge(sign, effect, dev, design, var, z)
        if together >= pooled_z and moved >= max(stayed, 1) and (best is None or together > best[0]):
            best = (together, p_idx, p_group)
    return None if best is None else (best[1], best[2])


def _descend(
    cuboids: Sequence[_Cuboid],
    index: dict[tuple[int, ...], int],
    cub_idx: int,
    group: int,
    leaves: _Leaves,
    min_gain: float,
    z: float,
) -> tuple[int, int] | None:
    """The best-fitting child that holds the element's move, if any.

    Along each further attribute the element splits into children. Go down to the best of them
    when the rest of the element stayed as expected (not significantly moved, and significantly
    short of what the child's effect would have given it: the child carries nearly all of the
    deviation), or when more children verifiably stayed put than moved (the element only gathers
    a few moved parts; on even parts the element stays, as `_climb` keeps a parent). Among
    attributes that qualify, the best child wins.
    """
    cub = cuboids[cub_idx]
    elem = (cub.gid == group) & (leaves.var > 0)
    sign, effect = _direction(elem, leaves)
    n_dims = 1 + max(max(c.attrs) for c in cuboids)
    best: tuple[float, int, int] | None = None
    for attr in range(n_dims):
        if attr in cub.attrs:
            continue
        c_idx = index[tuple(sorted((*cub.attrs, attr)))]
        children = cuboids[c_idx]
        dev, design, var = leaves.sums(children.gid, elem, children.n_groups)
        present = np.flatnonzero(var > 0)
        if present.size < 2:
            continue
        gains = leaves.gains(children.gid, elem, children.n_groups)
        child = int(present[np.argmax(gains[present])])
        if gains[child] < min_gain or (best is not None and gains[child] <= best[0]):
            continue
        moved, stayed = _judge(sign, effect, dev, design, var, z)
        if stayed > moved or _rest_stayed(sign, child, dev, design, var, z):
            best = (float(gains[child]), c_idx, child)
    return None if best is None else (best[1], best[2])


def _direction(elem: np.ndarray, leaves: _Leaves) -> tuple[float, float]:
    """Sign of the element's deviation and its common effect (deviation per unit of design)."""
    dev = float(leaves.dev[elem].sum())
    design = float(leaves.design[elem].sum())
    return _sign(dev), (dev / design if design > 0 else 0.0)


def _judge(
    sign: float, effect: float, dev: np.ndarray, design: np.ndarray, var: np.ndarray, z: float
) -> tuple[int, int]:
    """How many parts moved in the direction `sign`, and how many verifiably stayed put.

    A part moved when its deviation is significant; it stayed put when its deviation is not
    significant either way and falls significantly short of what `effect` would have given it.
    Parts too small to tell, or that moved the other way, count as neither.
    """
    z_dev = _z(sign * dev, var)
    short = _z(sign * (dev - effect * design), var) <= -z
    stayed = (np.abs(z_dev) < z) & short & (var > 0)
    return int((z_dev >= z).sum()), int(stayed.sum())


def _rest_stayed(
    sign: float, child: int, dev: np.ndarray, design: np.ndarray, var: np.ndarray, z: float
) -> bool:
    """Whether the element's leaves outside `child` stayed as expected while the child moved."""
    rest_var = var.sum() - var[child]
    if design[child] <= 0 or rest_var <= 0:
        return False
    effect = dev[child] / design[child]
    rest_dev = sign * (dev.sum() - dev[child])
    rest_like = sign * effect * (design.sum() - design[child])
    return bool(abs(_z(rest_dev, rest_var)) < z and _z(rest_dev - rest_like, rest_var) <= -z)


def _everywhere(
    cuboids: Sequence[_Cuboid], index: dict[tuple[int, ...], int], leaves: _Leaves, z: float
) -> bool:
    """Whether the move reached the whole cube: along no attribute did a value verifiably
    stay put (fall significantly short of the overall effect without moving itself)."""
    live = leaves.var > 0
    sign, effect = _direction(live, leaves)
    for attr in range(1 + max(max(c.attrs) for c in cuboids)):
        values = cuboids[index[(attr,)]]
        _, stayed = _judge(sign, effect, *leaves.sums(values.gid, live, values.n_groups), z)
        if stayed:
            return False
    return True
