"""Ordinary data with many segments: the morning job may not cry wolf because it scans more of
them. Each morning is scored from one engine query on the rows dated up to it (as the replay
does), and an alert morning is one with any alert of the metric."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import ibis
import pandas as pd

from investigator.request import Span, parse_metric
from investigator.triage.alerts import group
from investigator.triage.config import Target
from investigator.triage.scan import ScanItem, plan_dates, query_group, score_frame

from .shapes import START, daily

STATIONS = [f"s{i:02d}" for i in range(30)]
DAYS = 330
DROPS = {(STATIONS[3], START + timedelta(days=280)), (STATIONS[17], START + timedelta(days=301))}


def mornings(path: Path, last: int) -> dict[date, list[ScanItem]]:
    """The scan of riders and every station on each of the `last` days (1d against the median of
    the same weekdays)."""
    frame = pd.read_parquet(path)
    target = Target(metric="riders", data=str(path), time_column="date", dimensions=None,
                    scan_segments=["station"], direction="both")  # fmt: skip
    parsed = {0: parse_metric("riders")}
    full = query_group(ibis.memtable(frame), "date", ["station"], [parsed[0][0]])
    days = sorted(set(full["date"]))
    out = {}
    for end in days[-last:]:
        part = full[full["date"] <= end]
        windows = plan_dates(sorted(set(part["date"])), Span.of("1d"), "wow", end)
        out[end] = score_frame(part, [target], parsed, windows, 3.0, 50)
    return out


def test_thirty_ordinary_stations_alert_at_most_twice_a_month_and_their_drops_are_flagged(
    tmp_path: Path,
) -> None:
    """Thirty stations of noise, two of them losing 40% for a day: each scored at z 3 on its own,
    one of thirty crosses it every few days by chance; scored as one of thirty, the chance
    mornings are as rare as the total's own, and the drops still stand out."""
    path = daily(tmp_path / "n.parquet", DAYS, lambda d, s: 0.6 if (s, d) in DROPS else 1.0,
                 stations=STATIONS, seed=11)  # fmt: skip
    scans = mornings(path, 60)
    for station, day in DROPS:
        hit = next(i for i in scans[day] if i.segment == {"station": station})
        assert hit.flagged and hit.score is not None and hit.score < -3, (station, day, hit.score)
    chance = [d for d, items in scans.items() if group(items) and d not in {x for _, x in DROPS}]
    assert len(chance) <= 4, chance  # 60 mornings: at most 2 a month
