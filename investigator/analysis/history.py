"""Every dimension's values over the whole history, aggregated once per run.

The quality checks (per value, since a few weeks before the window) and the segments' own
histories (per value, over the whole history) read the same per-period sums per dimension value.
Computed once when the data is loaded (the kernel's `history`) and handed to both, the data is
grouped by each dimension once per run instead of once per analysis.
"""

from __future__ import annotations

from datetime import date
from typing import NamedTuple

import pandas as pd

from .queries import labelled_by_dimension, window_series, window_series_by
from .spec import AnalysisSpec
from .table import Table


class DimensionHistory(NamedTuple):
    """Per dimension, a frame of `date` (period start), the dimension's value (a column named
    after it), the numerator summed (`value`) and `rows`, and the label its nulls have (as in the
    cube)."""

    frames: dict[str, pd.DataFrame]
    labels: dict[str, str]
    windows: dict[str, pd.DataFrame] | None = None
    """A distinct count over the window (`count_distinct`): per dimension, the engine's count of
    each value (columns) over the window ending at every period (rows, `spec.window_grain`
    positions), and under "*" the whole data's; None otherwise."""

    def series(self, dim: str, spec: AnalysisSpec) -> pd.DataFrame:
        """What a segment's own history is read from: its values per period (`frames`), or for a
        windowed distinct count its counts per window (`windows`)."""
        if self.windows is not None and spec.numerator in spec.windowed:
            return self.windows[dim]
        return self.frames[dim]

    def since(self, start: date) -> dict[str, pd.DataFrame]:
        """The frames from `start` on: what grouping only the rows dated `start` or later gives
        when `start` is a period's first day."""
        return {d: f[f["date"] >= start].reset_index(drop=True) for d, f in self.frames.items()}


def dimension_history(table: Table, spec: AnalysisSpec) -> DimensionHistory:
    """One grouped query per dimension over the whole history: what `quality_checks` and
    `explain_segments` read per dimension value (pass it to them as `history`)."""
    frames: dict[str, pd.DataFrame] = {}
    labels: dict[str, str] = {}
    for dim in spec.dimensions:
        frames[dim], labels[dim] = labelled_by_dimension(table, spec, dim)
    if spec.numerator not in spec.windowed or not spec.dimensions:
        return DimensionHistory(frames, labels)
    dates = [d for f in frames.values() for d in (f["date"].min(), f["date"].max()) if len(f)]
    if not dates:
        return DimensionHistory(frames, labels)
    first, last = min(dates), max(dates)
    windows = {d: window_series_by(table, spec, d, labels[d], first, last) for d in spec.dimensions}
    windows["*"] = window_series(table, spec, first, last)[[spec.numerator]]
    return DimensionHistory(frames, labels, windows)
