"""The knobs of a localization search, read by the search and by the depth settling alike."""

from __future__ import annotations

from dataclasses import dataclass


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
    # A parent's other children, all taken together, moved with the element at this many noise
    # units. One test per parent, not one per part, so the usual one-sided bar of about 2 %;
    # part_z is higher because every part of an element is judged at once.
    pooled_z: float = 2.0
    # Later elements must reach this fraction of the first element's gain.
    min_relative_gain: float = 0.005
    # Later elements must carry this fraction of the total deviation with leaves of their own
    # (0: any significant element counts).
    min_share: float = 0.0
