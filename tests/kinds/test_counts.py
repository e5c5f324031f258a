"""Counts are counts: a count's noise is its own size (Poisson: a count of n swings by about
sqrt(n)), so a segment whose change is within that noise is never a cause, however large its
percent change or its share of a small net change."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from ..planners.test_real_shapes import kinds, run


def events(rng: np.random.Generator, months: int, rates: dict[str, float]) -> list[tuple[pd.Timestamp, str]]:
    rows = []
    for m in pd.date_range("2023-01-01", periods=months, freq="MS"):
        for kind, rate in rates.items():
            for _ in range(rng.poisson(rate)):
                rows.append((m + pd.Timedelta(days=int(rng.integers(0, 28))), kind))
    return rows


def test_a_new_segment_with_two_events_is_not_the_cause_of_a_small_count_move(tmp_path: Path) -> None:
    """Two years of about 12 events a month; in the last month a third category appears with two
    events while the others held: 0 -> 2 is ordinary for a count, not a segment that carries the move."""
    rng = np.random.default_rng(3)
    rows = events(rng, 24, {"a": 6.0, "b": 6.0})
    last = pd.Timestamp("2025-01-01")
    rows += [
        (last + pd.Timedelta(days=d), k)
        for d, k in [
            (2, "a"),
            (5, "a"),
            (9, "a"),
            (12, "a"),
            (15, "a"),
            (18, "a"),
            (3, "b"),
            (7, "b"),
            (11, "b"),
            (16, "b"),
            (21, "b"),
            (25, "b"),
            (8, "c"),
            (20, "c"),
        ]
    ]
    frame = pd.DataFrame(rows, columns=["ts", "category"])
    rep = run(tmp_path, frame, "count(*)", date(2025, 1, 31), window="1mo", time_column="ts")
    named = [c.segment for c in rep.root_causes if c.segment]
    assert {"category": "c"} not in named, rep.root_causes
    assert kinds(rep)[0] == "no_change", (rep.conclusion, rep.root_causes)
