"""Multi-dimensional root-cause localization: which segments explain a metric's move.

Given one row per leaf (a combination of attribute values) with an actual and an expected value,
`localize` returns the few elements (attribute=value sets at any depth) whose leaves deviate
together, and `localize_ratio` does the same for a derived metric num/den. The search itself
lives in `_localize_search`; this module prepares leaves and describes what was found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pydantic

from investigator.analysis._localize_search import Found, SearchOptions, search

__all__ = ["Element", "localize", "localize_ratio"]


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
    leaves = _group_leaves(df, dims, [actual, expected])
    codes, labels = _encode(leaves, dims)
    act = leaves[actual].to_numpy(float)
    exp = leaves[expected].to_numpy(float)
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
    leaves = _group_leaves(df, dims, cols)
    codes, labels = _encode(leaves, dims)
    na, ne, da, de = (leaves[c].to_numpy(float) for c in cols)
    exp_num = _expected_numerator(ne, de, da, na)
    found = search(codes, na, exp_num, _options(max_elements, max_depth, margin, len(dims)))
    totals = _RatioTotals(*(float(p.sum()) for p in (na, ne, da, de)))
    return [_ratio_element(f, dims, labels, codes, (na, ne, da, de), exp_num, totals) for f in found]


def _options(max_elements: int, max_depth: int, margin: float, n_dims: int) -> SearchOptions:
    return SearchOptions(max_elements=max_elements, max_depth=min(max_depth, n_dims), margin=margin)


def _group_leaves(df: pd.DataFrame, dims: Sequence[str], values: Sequence[str]) -> pd.DataFrame:
    """One row per leaf, NaN as 0, dimension values as strings (duplicates summed)."""
    missing = [c for c in [*dims, *values] if c not in df.columns]
    if missing:
        raise KeyError(f"columns {missing} not found; columns are: {list(df.columns)}")
    if not dims:
        raise ValueError("dims is empty; pass the attribute columns to localize over")
    frame = pd.DataFrame({d: df[d].astype(str).to_numpy() for d in dims})
    for col in dict.fromkeys(values):
        frame[col] = pd.to_numeric(df[col], errors="coerce").fillna(0.0).to_numpy(float)
    return frame.groupby(list(dims), sort=False, as_index=False)[list(dict.fromkeys(values))].sum()


def _encode(leaves: pd.DataFrame, dims: Sequence[str]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Integer code per leaf and attribute, with the labels to decode them."""
    pairs = [pd.factorize(leaves[d]) for d in dims]
    codes = np.column_stack([p[0] for p in pairs]) if pairs else np.empty((0, 0), np.int64)
    return codes.astype(np.int64), [np.asarray(p[1], dtype=object) for p in pairs]


def _segment(f: Found, dims: Sequence[str], labels: list[np.ndarray], codes: np.ndarray) -> dict[str, str]:
    leaf = int(np.flatnonzero(f.mask)[0])
    return {dims[j]: str(labels[j][codes[leaf, j]]) for j in f.cuboid}


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
