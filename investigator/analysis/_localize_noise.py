"""How noisy each leaf is, and how far noise alone can go: the weights and thresholds of the search.

A leaf's noise variance is estimated robustly from the leaves (or taken from a known model and
widened to what they show); the candidates that do not touch the best one reveal noise shared by
neighbouring leaves; the largest gain noise reaches among this many candidates sets the bar.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._localize_scoring import _best_element, _Cuboid, _cuboid_sums, _leaves

_MAD_TO_SIGMA = 1.4826


_CHI2_1_MEDIAN = 0.4549


_MIN_NULL_CANDIDATES = 20


_MIN_QUIET_LEAVES = 5


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
