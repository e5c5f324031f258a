"""Data problems, sized and said right: a quiet day in sparse event data is no missing day, and a
segment's missing day is sized from its own same weekdays, not from an average day."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from ..planners.test_real_shapes import run


def test_a_quiet_day_in_sparse_event_data_is_not_missing_data(tmp_path: Path) -> None:
    """About one event a day (a day with none is ordinary: a third of all days); the count fell
    in the last week, which has a quiet Friday as most weeks have a quiet day: no data problem."""
    rng = np.random.default_rng(4)
    days = pd.date_range("2025-01-01", "2025-06-29", freq="D")
    counts = rng.poisson(1.1, len(days))
    counts[-14:-7] = 2  # a busy week, then a slower one with a quiet Friday: the count fell
    counts[-7:] = [1, 1, 1, 1, 0, 1, 1]
    rows = [
        (d + pd.Timedelta(hours=int(h)), "web") for d, n in zip(days, counts, strict=True) for h in range(n)
    ]
    frame = pd.DataFrame(rows, columns=["ts", "source"]).assign(event_id=lambda f: range(len(f)))
    rep = run(tmp_path, frame, "count(*)", date(2025, 6, 29), window="7d", time_column="ts")
    assert not [c for c in rep.root_causes if c.kind == "data_quality"], rep.conclusion


def test_a_missing_saturday_is_sized_from_earlier_saturdays(tmp_path: Path) -> None:
    """Each region sells three times as much on Saturdays; the north's last Saturday has no rows:
    about 3,000 is missing (its Saturdays), not about 1,300 (its average day)."""
    days = pd.date_range("2025-01-01", "2025-06-29", freq="D")
    rows = []
    for d in days:
        for region in ("north", "south", "east"):
            if region == "north" and d == pd.Timestamp("2025-06-28"):
                continue  # the last Saturday's partition never landed
            rows.append((d, region, 3000.0 if d.weekday() == 5 else 1000.0))
    frame = pd.DataFrame(rows, columns=["date", "region", "revenue"])
    rep = run(tmp_path, frame, "revenue", date(2025, 6, 29), window="7d")
    (missing,) = [c for c in rep.root_causes if c.kind == "data_quality"]
    assert missing.detail == "missing_data" and missing.segment == {"region": "north"}
    assert missing.change is not None and abs(missing.change + 3000.0) < 1.0, missing.evidence


def test_three_values_folded_into_one_are_read_as_a_merge(tmp_path: Path) -> None:
    """A source folds three small categories into 'other' at the start of the window: one merge,
    compared as one segment, not one relabel and two missing segments."""
    days = pd.date_range("2025-01-01", "2025-06-29", freq="D")
    rows = []
    for d in days:
        if d < pd.Timestamp("2025-06-23"):
            cats = {"books": 1000.0, "toys": 300.0, "games": 250.0, "music": 200.0}
        else:
            cats = {"books": 700.0, "other": 750.0}  # books fell; toys, games and music became 'other'
        rows += [(d, c, v) for c, v in cats.items()]
    frame = pd.DataFrame(rows, columns=["date", "category", "revenue"])
    rep = run(tmp_path, frame, "revenue", date(2025, 6, 29), window="7d")
    assert not [c for c in rep.root_causes if c.detail == "missing_data"], rep.conclusion
    assert "Merged, compared as one segment" in rep.conclusion and "became category=other" in rep.conclusion
    assert rep.root_causes[0].segment == {"category": "books"}, rep.root_causes
