"""Multi-dimensional root-cause localization: which segments explain a metric's move.

Given one row per leaf (a combination of attribute values) with an actual and an expected value,
`localize` returns the few elements (attribute=value sets at any depth) whose leaves deviate
together, and `localize_ratio` does the same for a derived metric num/den. The search itself
lives in `_localize_search` (with `_localize_scoring`, `_localize_noise`, `_localize_depth`); this
module prepares leaves and describes what was found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pydantic

from investigator.analysis._localize_options import SearchOptions
from investigator.analysis._localize_search import Found, search

__all__ = ["Element", "localize", "localize_ratio"]

RATIO_MIN_SHARE = 0.1
"""Fraction of a ratio's change that an element after the first must explain on its own."""


class Element(pydantic.BaseModel):
    """A segment that explains part of the change, with its numbers."""

    segment: dict[str, str]
    """Attribute -> value; never empty."""
    actual: float
    """Sum of actual over the element's leaves (ratio metric: the actual ratio)."""
    expected: float
    """Same for expected."""
    change: float
    """actual - expected; for a ratio: the element's contribution to the ratio's change."""
    share: float
    """Signed fraction of the total change explained by this element (~1.0 = all of it)."""
    score: float
    """Chi-square of the element's fit in noise units: higher = more certain."""


def localize(
    df: pd.DataFrame,
    dims: Sequence[str],
    actual: str = "real",
    expected: str = "predict",
    *,
    max_elements: int = 3,
    max_depth: int = 3,
    margin: float = 12.0,
) -> list[Element]:
    """Additive metric. Most important first.

    [] when nothing stands out (no anomaly / change spread evenly). `max_depth` caps how many
    attributes an element combines; a larger `margin` asks for stronger evidence per element.
    """
    codes, labels, leaves = _leaf_table(df, dims, [actual, expected])
    act, exp = leaves[actual], leaves[expected]
    found = search(codes, act, exp, _options(max_elements, max_depth, margin, len(dims)))
    total_change = act.sum() - exp.sum()
    return [_additive_element(f, dims, labels, codes, act, exp, total_change) for f in found]


def localize_ratio(
    df: pd.DataFrame,
    dims: Sequence[str],
    num_actual: str,
    num_expected: str,
    den_actual: str,
    den_expected: str,
    *,
    max_elements: int = 3,
    max_depth: int = 3,
    margin: float = 12.0,
) -> list[Element]:
    """Derived metric num/den (e.g. conversion = orders/sessions): elements whose ratio changed.

    The numerator is compared with what the actual denominator would have produced at the
    expected rate, so a shift in mix alone (more sessions in a low-converting segment) is not
    reported, only segments whose rate moved.
    """
    cols = [num_actual, num_expected, den_actual, den_expected]
    codes, labels, leaves = _leaf_table(df, dims, cols)
    na, ne, da, de = (leaves[c] for c in cols)
    exp_num = _expected_numerator(ne, de, da, na)
    # A rate's noise model is approximate (real rates drift together), so small significant
    # remainders are mostly that: a later element must carry a tenth of the change itself.
    options = _options(max_elements, max_depth, margin, len(dims), min_share=RATIO_MIN_SHARE)
    model = _proportion_noise(na, ne, da, de)
    if model is None:
        found = search(codes, na, exp_num, options)
    else:
        found = search(codes, na, exp_num, options, variance=model[0], design=model[1])
    totals = _RatioTotals(*(float(p.sum()) for p in (na, ne, da, de)))
    return [_ratio_element(f, dims, labels, codes, (na, ne, da, de), exp_num, totals) for f in found]


def _options(
    max_elements: int, max_depth: int, margin: float, n_dims: int, min_share: float = 0.0
) -> SearchOptions:
    return SearchOptions(
        max_elements=max_elements, max_depth=min(max_depth, n_dims), margin=margin, min_share=min_share
    )


def _leaf_table(
    df: pd.DataFrame, dims: Sequence[str], values: Sequence[str]
) -> tuple[np.ndarray, list[np.ndarray], dict[str, np.ndarray]]:
    """One row per leaf: integer code per attribute, the labels to decode them, summed values.

    Dimension values are compared as text (1 and "1" are one value); rows missing a dimension
    value are left out; values NaN or non-numeric count as 0; duplicate rows of a leaf are summed.
    """
    missing = [c for c in [*dims, *values] if c not in df.columns]
    if missing:
        raise KeyError(f"columns {missing} not found; columns are: {list(df.columns)}")
    if not dims:
        raise ValueError("dims is empty; pass the attribute columns to localize over")
    keep = np.logical_and.reduce([df[d].notna().to_numpy() for d in dims])
    rows = df if keep.all() else df[keep]
    columns, labels = [], []
    for d in dims:
        raw, uniques = pd.factorize(rows[d])
        text, names = pd.factorize(pd.Series(uniques).astype(str).to_numpy(dtype=object))
        columns.append(text[raw].astype(np.int64))
        labels.append(np.asarray(names, dtype=object))
    codes = np.column_stack(columns)
    sums = {
        c: pd.to_numeric(rows[c], errors="coerce").fillna(0.0).to_numpy(float) for c in dict.fromkeys(values)
    }
    leaf = codes[:, 0]
    for j in range(1, codes.shape[1]):
        leaf = pd.factorize(leaf * (int(codes[:, j].max(initial=0)) + 1) + codes[:, j])[0]
    n_leaves = int(leaf.max(initial=-1)) + 1
    if n_leaves == len(leaf):
        return codes, labels, sums
    first = np.empty(n_leaves, np.int64)
    first[leaf[::-1]] = np.arange(len(leaf) - 1, -1, -1)
    return codes[first], labels, {c: np.bincount(leaf, v, n_leaves) for c, v in sums.items()}


def _segment(f: Found, dims: Sequence[str], labels: list[np.ndarray], codes: np.ndarray) -> dict[str, str]:
    """The element's name: every attribute value that all of its leaves share, in `dims` order.

    Several names can cover the same leaves (cdn=5 when all of cdn 5's traffic is p2p=0 also
    reads cdn=5 & p2p=0), and which one the search reached depends on its path. The longest says
    the most about the leaves that moved and never names others, so it is the one reported (the
    closed pattern of the leaves). In a full cube it is the searched combination itself. A value
    every leaf of the data has (a filtered run's country=DE) says nothing and is left out.
    """
    inside = codes[f.mask]
    everywhere = (codes == codes[0]).all(axis=0)
    shared = [
        j for j in range(codes.shape[1])
        if j in f.cuboid or ((inside[:, j] == inside[0, j]).all() and not everywhere[j])
    ]  # fmt: skip
    return {dims[j]: str(labels[j][inside[0, j]]) for j in shared}


def _additive_element(
    f: Found,
    dims: Sequence[str],
    labels: list[np.ndarray],
    codes: np.ndarray,
    act: np.ndarray,
    exp: np.ndarray,
    total_change: float,
) -> Element:
    a, e = float(act[f.mask].sum()), float(exp[f.mask].sum())
    return Element(
        segment=_segment(f, dims, labels, codes),
        actual=a,
        expected=e,
        change=a - e,
        share=_safe_div(a - e, total_change),
        score=f.gain,
    )


@dataclass(frozen=True)
class _RatioTotals:
    num_actual: float
    num_expected: float
    den_actual: float
    den_expected: float

    @property
    def change(self) -> float:
        actual = _safe_div(self.num_actual, self.den_actual)
        return actual - _safe_div(self.num_expected, self.den_expected)


def _expected_numerator(
    num_expected: np.ndarray,
    den_expected: np.ndarray,
    den_actual: np.ndarray,
    num_actual: np.ndarray,
) -> np.ndarray:
    """Numerator each leaf would have had at its expected rate, given its actual denominator.

    A leaf with no expected denominator has no known rate, so it is left neutral (expected =
    actual): its arrival is a mix effect, not a rate change.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = num_expected / den_expected
    return np.where(den_expected > 0, den_actual * rate, num_actual)


def _proportion_noise(
    num_actual: np.ndarray,
    num_expected: np.ndarray,
    den_actual: np.ndarray,
    den_expected: np.ndarray,
) -> tuple[np.ndarray, np.ndarray] | None:
    """Binomial noise variance and odds-shift design of the numerator, for a proportion.

    When every numerator lies within [0, its denominator] the metric is a share of counts
    (success rate, conversion): the numerator given its denominator n is binomial, var =
    n·p(1-p), plus the expected rate's own error (estimated on the expected denominator). A
    common cause shifts the odds of every leaf alike, which moves a leaf's numerator by n·p(1-p)
    per unit shift: leaves near 0 % or 100 % barely move. p is the leaf's rate over both periods
    with one success and one failure added, so that a leaf with no failures yet keeps some noise.
    None for other ratios (revenue per order, ...): their noise is estimated from the leaves.
    """
    counts = (num_actual, num_expected, den_actual, den_expected)
    if any((c < 0).any() for c in counts):
        return None
    if (num_actual > den_actual * (1 + 1e-9)).any() or (num_expected > den_expected * (1 + 1e-9)).any():
        return None
    rate = (num_actual + num_expected + 1.0) / (den_actual + den_expected + 2.0)
    design = den_actual * rate * (1.0 - rate)
    with np.errstate(divide="ignore", invalid="ignore"):
        forecast_error = np.where(den_expected > 0, den_actual / den_expected, 0.0)
    return design * (1.0 + forecast_error), design


def _ratio_element(
    f: Found,
    dims: Sequence[str],
    labels: list[np.ndarray],
    codes: np.ndarray,
    parts: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    exp_num: np.ndarray,
    totals: _RatioTotals,
) -> Element:
    na, ne, da, de = (float(p[f.mask].sum()) for p in parts)
    # Rate effect: how much the overall ratio moved because this element's rate moved.
    change = _safe_div(na - float(exp_num[f.mask].sum()), totals.den_actual)
    return Element(
        segment=_segment(f, dims, labels, codes),
        actual=_safe_div(na, da),
        expected=_safe_div(ne, de),
        change=change,
        share=_safe_div(change, totals.change),
        score=f.gain,
    )


def _safe_div(num: float, den: float) -> float:
    return float(num / den) if den != 0 else 0.0
