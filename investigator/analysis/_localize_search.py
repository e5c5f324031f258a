"""Greedy, vectorised search for the elements that explain a leaf-level deviation.

Model: inside a root-cause element every leaf moves by one common effect (the ripple effect),
outside it leaves follow their expectation up to noise. A leaf's response to a unit effect is its
`design` value: its expected value for an additive metric (one common factor), n·p(1-p) for a
proportion (one common shift of the odds). Each candidate element is scored by how much its
one-parameter fit lowers the noise-weighted squared error of its leaves (a chi-square statistic);
the best significant element is taken, its depth settled, its leaves set aside, and the search
repeats. All candidates of one cuboid (a combination of attributes) are scored at once with
`bincount`, shallower cuboids from the sums of deeper ones.

Depth: the best fit favours whichever level of the hierarchy moved most cleanly, which is not
always the cause (children of a faulty parent react unequally; two causes sit under one broad
segment). So the chosen element is compared with its parents and children part by part, each part
judged in its own noise units (`_settle_depth`): up to a parent when that parent's other children
moved too, most of them; down to a child when the child carries the move and the rest of the
element stayed as expected, or when as many of the element's parts along some attribute
verifiably stayed put as moved. Once all elements are found, each one's depth is settled again
without the leaves of the others, so that a cause found later does not pass for its neighbours'.
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
_MIN_QUIET_LEAVES = 5


@dataclass(frozen=True)
class SearchOptions:
    """Knobs of the search; defaults work for forecasts and for week-over-week comparisons."""

    max_elements: int = 3
    max_depth: int = 3
    # An element must beat the largest noise-only chi-square expected among all candidates by
    # this many units (chi-square of 1 dof), so pure noise yields nothing.
    margin: float = 12.0
    # Parts of an element are judged at this many noise units: a part moved when its deviation
    # is this significant, and stayed put when, not moved, it falls this far short of what the
    # element's effect would have given it.
    part_z: float = 3.0
    # Later elements must reach this fraction of the first element's gain.
    min_relative_gain: float = 0.005
    # Later elements must carry this fraction of the total deviation with leaves of their own
    # (0: any significant element counts).
    min_share: float = 0.0


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


def noise_weights(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """Inverse noise variance per leaf, var = s² · m^p with m the leaf's mean level.

    p (1 = Poisson-like, 2 = multiplicative) and s are estimated robustly from the leaves, so
    forecasts with relative error and raw counts week-over-week are both weighted sensibly.
    """
    # noise grows with the size of a leaf's flows, whatever their sign: a loss-making cell of a
    # profit metric is as noisy as a profitable one of the same size (and must not be ignored)
    level = np.abs(actual + expected) / 2.0
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


def model_weights(resid: np.ndarray, variance: np.ndarray, quiet: np.ndarray | None = None) -> np.ndarray:
    """Inverse variance from a known noise model, widened to what the leaves show.

    The model's variance v is a floor (real data is never calmer than counting noise). Real
    rates also drift from period to period, which adds variance growing faster than v; so, as
    in `noise_weights`, var = max(v, s² · v^p) with p (1 = as the model, 2 = drift) and s
    estimated robustly from the leaves, from the `quiet` ones only when given (and enough).
    """
    pos = variance > 0
    weights: np.ndarray = np.zeros_like(variance)
    if not pos.any():
        return weights
    calm = pos if quiet is None or (pos & quiet).sum() < _MIN_QUIET_LEAVES else pos & quiet
    model, dev = variance[calm], resid[calm]
    power = _variance_power(model, np.abs(dev), default=1.0)
    scaled = dev / model ** (power / 2.0)
    spread = _MAD_TO_SIGMA * float(np.median(np.abs(scaled - np.median(scaled))))
    weights[pos] = 1.0 / np.maximum(variance[pos], spread**2 * variance[pos] ** power)
    return weights


def _variance_power(level: np.ndarray, resid: np.ndarray, default: float = 1.5) -> float:
    """Slope of log |residual| on log level, doubled: how noise grows with the leaf's size."""
    nz = resid > 0
    if nz.sum() < 10 or np.ptp(np.log(level[nz])) < 1.0:
        return default
    log_m, log_r = np.log(level[nz]), np.log(resid[nz])
    keep = np.ones(len(log_m), dtype=bool)
    for _ in range(2):  # refit without the leaves far off the line (anomalies)
        slope, icpt = np.polyfit(log_m[keep], log_r[keep], 1)
        off = log_r - (slope * log_m + icpt)
        keep = np.abs(off - np.median(off)) < 2.5 * _MAD_TO_SIGMA * np.median(np.abs(off))
    return float(np.clip(2.0 * slope, 1.0, 2.0))


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


def _quiet_weights(
    cuboids: Sequence[_Cuboid],
    resid: np.ndarray,
    design: np.ndarray,
    weights: np.ndarray,
    variance: np.ndarray,
) -> np.ndarray:
    """The model's weights with the drift estimated on the leaves outside the best candidate.

    A median is robust only while most leaves are calm: when a fault reaches half of them (all
    of p2p=0, say) their deviations pass for drift, every leaf's noise is inflated and the fault
    is not significant any more. The best candidate is the likeliest fault, so the drift is
    measured on the leaves it leaves out, twice, since a calmer estimate can change the best.
    """
    for _ in range(2):
        step = _best_element(cuboids, _leaves(resid, design, weights, weights > 0, 1.0))
        if step is None:
            return weights
        _, _, cub_idx, group, _ = step
        quiet = cuboids[cub_idx].gid != group
        weights = model_weights(resid, variance, quiet)
    return weights


def _leaves(
    dev: np.ndarray, design: np.ndarray, weights: np.ndarray, live: np.ndarray, noise: float
) -> _Leaves:
    """The leaves in `live` in play, their variance widened by the candidates' overdispersion."""
    w = weights * live
    with np.errstate(divide="ignore"):
        var = np.where(w > 0, noise / np.where(w > 0, w, 1.0), 0.0)
    return _Leaves(dev * live, design * live, w, var)


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
    touched = _cuboid_sums(cuboids, [best.astype(float)])
    null = [gains[(gains > 0) & (t[0] == 0)] for t, gains in zip(touched, per_cuboid, strict=True)]
    gains = np.concatenate(null)
    if gains.size < _MIN_NULL_CANDIDATES:
        return 1.0
    return max(1.0, float(np.median(gains)) / _CHI2_1_MEDIAN)


def _noise_threshold(cuboids: Sequence[_Cuboid], margin: float) -> float:
    """Largest chi-square(1) that noise alone reaches among this many candidates, plus margin."""
    n_candidates = max(sum(c.n_groups for c in cuboids), 2)
    return 2.0 * float(np.log(n_candidates)) + margin


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
        step = _climb(cuboids, index, cub_idx, group, leaves, options.part_z)
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
) -> tuple[int, int] | None:
    """The parent whose other children moved with the element, if any (the most significant).

    Those siblings must have moved significantly in the element's direction taken together, and
    more of them must have moved than verifiably stayed put: a parent-level fault reaches most
    of its children (by different amounts: devices do not all react alike), while one moved
    sibling among quiet ones is a separate, narrower cause that a later step finds.
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
        if together >= z and moved > stayed and (best is None or together > best[0]):
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
    deviation), or when at least as many children verifiably stayed put as moved (the element
    only gathers a few moved parts). Among attributes that qualify, the best child wins.
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
        if stayed >= max(moved, 1) or _rest_stayed(sign, child, dev, design, var, z):
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


def _z(dev: np.ndarray | float, var: np.ndarray | float) -> np.ndarray:
    """dev / sqrt(var), 0 where there is no variance."""
    dev_a, var_a = np.asarray(dev, dtype=float), np.asarray(var, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(var_a > 0, dev_a / np.sqrt(np.where(var_a > 0, var_a, 1.0)), 0.0)
    return out


def _sign(value: float) -> float:
    return -1.0 if value < 0 else 1.0
