"""Generated daily tables of the shapes the morning job meets, written as real Parquet files."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from investigator.sources import open_data
from investigator.triage.config import Direction, Target
from investigator.triage.scan import ScanItem, plan_source, scan_target

STATIONS = ["a", "b", "c", "d"]
START = date(2026, 1, 1)


def daily(
    path: Path,
    days: int,
    factor: Callable[[date, str], float] = lambda d, s: 1.0,
    level: float = 1000.0,
    skip: set[date] | frozenset[date] = frozenset(),
    start: date = START,
    seed: int = 0,
    stations: list[str] = STATIONS,
) -> Path:
    """Riders by station and day (weekends at 60%, 5% noise), each multiplied by `factor(day,
    station)`; the days in `skip` have no rows at all (a load that never came)."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(days):
        d = start + timedelta(days=i)
        if d in skip:
            continue
        for s in stations:
            mean = level * (0.6 if d.weekday() >= 5 else 1.0) * np.exp(rng.normal(0, 0.05)) * factor(d, s)
            trips = max(1, int(mean) // 10)
            rows.append({"date": d, "station": s, "riders": int(rng.poisson(mean)), "trips": trips,
                         "late": int(rng.binomial(trips, 0.1))})  # fmt: skip
    pd.DataFrame(rows).to_parquet(path, index=False)
    return path


def scan(
    path: Path, metric: str, end: date | None, window: str = "1d", baseline: str = "wow",
    direction: Direction = "both",
) -> dict[str, ScanItem]:  # fmt: skip
    """The scan of one metric and its stations, by station (`total` for the whole)."""
    table = open_data(str(path), "date")
    windows = plan_source(table, "date", window, baseline, end)
    target = Target(metric=metric, data=str(path), time_column="date", dimensions=None,
                    scan_segments=["station"], direction=direction)  # fmt: skip
    return {next(iter(i.segment.values()), "total"): i for i in scan_target(table, target, windows, 3.0, 50)}
