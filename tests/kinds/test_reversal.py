"""The reversal of a steady run is named as such: the first fall after years of rises is news,
and a history too short to score it does not make it "small"."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd

from ..planners.test_real_shapes import kinds, run


def test_the_first_fall_after_seven_rises_is_named_and_explained(tmp_path: Path) -> None:
    """Nine years of a price in four regions: +8% a year for seven years, then -4% everywhere."""
    rows = []
    for i in range(9):
        for region, base in (("north", 100.0), ("south", 80.0), ("east", 120.0), ("west", 90.0)):
            level = base * 1.08**i if i < 8 else base * 1.08**7 * 0.96
            rows.append((pd.Timestamp(f"{1985 + i}-01-01"), region, round(level, 4)))
    frame = pd.DataFrame(rows, columns=["year", "region", "price"])
    rep = run(tmp_path, frame, "price", date(1993, 12, 31), window="1y", time_column="year")
    assert "It is the first fall after 7 rises in a row." in rep.conclusion
    assert kinds(rep)[0] == "broad_based", rep.conclusion
