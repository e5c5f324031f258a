"""The morning job replayed morning by morning, in one process, the way a data engineer would before
trusting it: how often it alerts, how often it echoes or repeats itself, and whether it catches
what was planted.

    python benchmarks/triage_replay.py [--window 1d:wow --window 7d:previous] [--no-real] [--days 1096]

Each morning the data holds the rows dated before that morning (written to a Parquet file), and the
real job runs on it (`run_triage`, real DuckDB and SQLite state; the investigation seam answers at
once and a recording notifier takes the message). The generated series: three years of daily
ridership for a city's 20 stations (weekly and yearly cycles, growth, a shared weather shock and
each station's own noise), its four holidays every year, a blizzard, 30 one-day 40% drops of one
station, two slow declines (-40% over three weeks), a load that never arrives (a day with no rows),
a small count (incidents, ~0.7 a day per station) and a ratio (late trips / trips). The last year
is replayed. With `../shared/real-public` present, its daily tables are replayed too (Puerto Rico
deaths, New York flights by origin and carrier, a pizza shop's orders by size and type).

Printed per table and window: flagged lines and alert mornings per metric per month (all, and
those no planted or known event explains: ordinary data), the echo share (a flag against a flag of
the other sign a week before on the same series), the recovery share (such a flag after a move
that held at least three of the five windows of its baseline: the move's end, counted apart from
echoes), the repeat share (an announcement of a series announced the
morning before), recall and median rank of the planted drops, when each slow decline was first
flagged, the stale-data alert for the missing load, the rises flagged in the five weeks after it
(its hole in the baseline), and the holidays labelled expected. Runs on today's code or an older
checkout (PYTHONPATH=...): an older job announces every flagged line whose window end is new.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

SHARED = Path(__file__).resolve().parents[2] / "shared" / "real-public"
STATIONS = [f"s{i:02d}" for i in range(20)]
DROPS = 30


@dataclass
class Planted:
    """What was planted in a generated table, to score the replay against."""

    drops: list[tuple[str, date]] = field(default_factory=list)  # (station, day): -40% that day
    declines: list[tuple[str, date, date]] = field(default_factory=list)  # (station, start, bottom)
    outage: date | None = None  # a day whose rows never arrive
    events: list[tuple[str | None, date, date]] = field(default_factory=list)  # known moves: station or all


def holidays(year: int) -> dict[date, float]:
    """New Year, 4 July, Thanksgiving (fourth Thursday of November), Christmas: the share of a
    normal day's riders."""
    nov1 = date(year, 11, 1)
    thanksgiving = nov1 + timedelta(days=(3 - nov1.weekday()) % 7 + 21)
    return {date(year, 1, 1): 0.5, date(year, 7, 4): 0.55, thanksgiving: 0.45, date(year, 12, 25): 0.4}


def generate(days: int, seed: int = 7) -> tuple[pd.DataFrame, Planted, list[date]]:
    """Ridership by station and day, with what was planted, and the mornings to replay (the last
    year)."""
    rng = np.random.default_rng(seed)
    start = date(2022, 1, 1)
    dates = [start + timedelta(days=i) for i in range(days)]
    last_year = dates[-365:]
    planted = Planted()
    special: dict[date, float] = {}
    for y in sorted({d.year for d in dates}):
        special.update(holidays(y))
    blizzard = last_year[40]
    special[blizzard] = 0.2
    planted.outage = last_year[160]
    for d, _share in special.items():
        planted.events.append((None, d, d))
    busy = set(special) | {planted.outage}
    for s, first in zip(["s03", "s11"], [last_year[90], last_year[250]], strict=True):
        planted.declines.append((s, first, first + timedelta(days=20)))
        # the decline, and the week it ends in: its end is a real rise against the weeks before
        planted.events.append((s, first, first + timedelta(days=41)))
    picks: set[tuple[str, date]] = set()
    while len(picks) < DROPS:
        d = last_year[int(rng.integers(30, 360))]
        s = STATIONS[int(rng.integers(0, len(STATIONS)))]
        near = any(abs((d - b).days) <= 8 for b in busy)
        if not near and all(abs((d - p).days) > 3 for _, p in picks):
            picks.add((s, d))
    planted.drops = sorted(picks, key=lambda x: x[1])
    planted.events += [(s, d, d) for s, d in planted.drops]
    level = {s: float(rng.lognormal(np.log(3000), 0.6)) for s in STATIONS}
    shock = {d: float(rng.normal(0, 0.03)) for d in dates}
    rows = []
    for i, d in enumerate(dates):
        if d == planted.outage:
            continue
        season = 1 + 0.1 * np.sin(2 * np.pi * (d.timetuple().tm_yday - 100) / 365.25)
        week = 0.6 if d.weekday() >= 5 else 1.0
        trend = 1.03 ** (i / 365.25)
        for s in STATIONS:
            mean = level[s] * season * week * trend * np.exp(shock[d] + rng.normal(0, 0.05))
            mean *= special.get(d, 1.0)
            if (s, d) in picks:
                mean *= 0.6
            for ds, first, bottom in planted.declines:
                if ds == s and first <= d <= bottom + timedelta(days=14):
                    mean *= 1 - 0.4 * min(1.0, ((d - first).days + 1) / ((bottom - first).days + 1))
            riders = int(rng.poisson(mean))
            trips = max(1, riders // 40)
            late, incidents = int(rng.binomial(trips, 0.08)), int(rng.poisson(0.7))
            rows.append({"date": d, "station": s, "riders": riders, "trips": trips, "late": late,
                         "incidents": incidents})  # fmt: skip
    return pd.DataFrame(rows), planted, last_year


@dataclass
class Morning:
    end: date | None  # the window's end (None: nothing scanned)
    flagged: list[tuple[str, str, int, float]]  # (metric, segment, sign, |score|) in rank order
    told: list[tuple[str, str, int, list[str]]]  # announced: (metric, head segment, sign, members)
    stale: bool
    expected: list[str] = field(default_factory=list)  # alerts labelled expected: "metric segment"


def seg_text(segment: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in segment.items())


def replay(frame: pd.DataFrame, body: dict[str, Any], mornings: list[date]) -> list[Morning]:
    """The job's scan and announcements each morning on the rows dated before it: one engine query
    (DuckDB through Ibis) for the whole table, each morning scored on its rows; today's alerts,
    episodes and stale-data rule as the job applies them (`alerts.group`, `episodes.follow`,
    `freshness.stale`), its SQLite state kept in memory."""
    import ibis

    from investigator.errors import DataError
    from investigator.request import Span, parse_metric
    from investigator.sources.windows import plan
    from investigator.triage import scan
    from investigator.triage.config import TriageConfig

    new = hasattr(scan, "score_frame")
    config = TriageConfig.model_validate({**body, "data": "replay.parquet"})
    targets = config.targets()
    parsed = {i: parse_metric(t.expression or t.metric) for i, t in enumerate(targets)}
    measures = list({m.name: m for pair in parsed.values() for m in pair if m is not None}.values())
    alias = {m.name: f"m{i}" for i, m in enumerate(measures)}
    dims = targets[0].scan_segments
    full = scan.query_group(ibis.memtable(frame), "date", dims, measures)
    span = Span.of(body["window"])
    state = Memory() if new else None
    out: list[Morning] = []
    for m in mornings:
        part = full[full["date"] < m]
        dates = sorted(set(part.loc[part["_dim"] == "", "date"]))
        try:
            windows = (
                scan.plan_dates(dates, span, config.baseline, None)
                if new
                else plan(dates, span, config.baseline, None, flag="")
            )
        except DataError:  # the job could not scan this morning (an older one, on an outage)
            out.append(Morning(None, [], [], False))
            continue
        if new:
            items = scan.score_frame(part, targets, parsed, windows, config.threshold, 50, config.scoring())
        else:  # an older checkout: its scoring, one metric at a time
            frames = scan.wide(part, dims, 50, windows)
            items = []
            for i, (num, den) in parsed.items():
                metric = {"num": frames[alias[num.name]], **({"den": frames[alias[den.name]]} if den else {})}
                items += scan._score(targets[i], metric, windows, config.threshold)
        flags = scan.ranked(items, config.threshold)
        flagged = [(i.metric, seg_text(i.segment), _sign(i), abs(i.score or 0.0)) for i in flags]
        if new:
            assert state is not None
            told, expected, stale = state.morning(config, items, dates[-1], m, windows.current.days)
        else:  # the old job: every flagged line whose window end is new, one line each
            told = [(f[0], f[1], f[2], []) for f in flagged]
            expected, stale = [], False
        out.append(Morning(windows.current.end, flagged, told, stale, expected))
    return out


class Memory:
    """What the job's SQLite state remembers between mornings, kept in memory for the replay."""

    def __init__(self) -> None:
        from investigator.triage.episodes import Episode
        from investigator.triage.freshness import Load

        self.episodes: dict[tuple[str, str], Episode] = {}
        self.told: set[tuple[str, str, date]] = set()
        self.load: Load | None = None

    def morning(
        self, config: Any, items: list[Any], last: date, today: date, days: int
    ) -> tuple[list[tuple[str, str, int, list[str]]], list[str], bool]:
        """The alerts told this morning, those labelled expected, and whether stale data was said."""
        from investigator.triage.alerts import group
        from investigator.triage.episodes import follow, series_key
        from investigator.triage.freshness import seen, stale

        changes = follow(list(self.episodes.values()), items, config.threshold, days)
        events = {}
        for c in changes:
            events[c.episode.series] = c.event
            if c.episode.open:
                self.episodes[c.episode.series] = c.episode
            else:
                self.episodes.pop(c.episode.series, None)

        def key(item: Any) -> tuple[str, str, date]:
            series = series_key(item.metric, item.segment)
            ep = self.episodes.get(series)
            return (*series, ep.first_end if ep else item.window_end)

        told, expected = [], []
        for alert in group(items, config.threshold):
            head = alert.head
            if head.expected and not config.notify_expected:
                expected.append(f"{head.metric} {seg_text(head.segment)}".strip())
                continue
            worse = events.get(series_key(head.metric, head.segment)) == "worse"
            if key(head) in self.told and not worse:
                continue
            if key(head) not in self.told and any(key(x) in self.told for x in alert.members):
                self.told.add(key(head))  # the total catching up with a segment already told
                continue
            self.told |= {key(x) for x in [head, *alert.members]}
            ep = self.episodes.get(series_key(head.metric, head.segment))
            if ep is not None:
                z = head.score if head.score is not None else (head.change_pct or 0.0) / 0.25 * 3.0
                self.episodes[ep.series] = ep.model_copy(update={"announced": abs(z)})
            told.append(
                (
                    head.metric,
                    seg_text(head.segment),
                    _sign(head),
                    [seg_text(x.segment) for x in alert.members],
                )
            )
        found = stale("replay", last, None, self.load, today)
        said = found is not None and not (self.load is not None and self.load.notified)
        self.load = seen("replay", last, self.load, today)
        if said:
            self.load.notified = True
        return told, expected, said


def _sign(item: Any) -> int:
    value = item.score if item.score is not None else item.change_pct
    return 1 if (value or 0.0) > 0 else -1


def summarise(
    name: str, runs: list[Morning], metrics: list[str], length: int, planted: Planted | None
) -> dict[str, Any]:
    """The numbers the issue asks for, from one replay."""
    months = max(1.0, len(runs) / 30.4)
    flags: dict[tuple[str, str], dict[date, int]] = defaultdict(dict)
    for r in runs:
        if r.end:
            for metric, s, sign, _ in r.flagged:
                flags[(metric, s)][r.end] = sign
    lines = sum(len(r.flagged) for r in runs)
    echoes = recoveries = 0
    for (_, _), by_day in flags.items():
        for d, sign in by_day.items():
            before = [by_day.get(d - timedelta(days=k)) for k in range(7, 7 + length)]
            if any(b == -sign for b in before):
                # a move back after one that held most of the baseline (3 of its 5 windows) is
                # the end of that move (a recovery), not an echo of one odd window
                held = sum(by_day.get(d - timedelta(days=length * k if length >= 7 else 7 * k)) == -sign
                           for k in range(1, 6))  # fmt: skip
                if held >= 3:
                    recoveries += 1
                else:
                    echoes += 1
    told_days: dict[tuple[str, str], dict[date, int]] = defaultdict(dict)
    repeats = announced = 0
    for r in runs:
        for metric, s, sign, _ in r.told:
            announced += 1
            if r.end and told_days[(metric, s)].get(r.end - timedelta(days=1)) == sign:
                repeats += 1
            if r.end:
                told_days[(metric, s)][r.end] = sign
    per_metric = {}
    for metric in metrics:
        alert_mornings = [r for r in runs if any(t[0] == metric for t in r.told)]
        unexplained = [r for r in alert_mornings if not _explained(r, metric, length, planted)]
        per_metric[metric] = {
            "flagged_lines_per_month": round(
                sum(sum(1 for f in r.flagged if f[0] == metric) for r in runs) / months, 1
            ),
            "alert_mornings_per_month": round(len(alert_mornings) / months, 2),
            "unexplained_alert_mornings_per_month": round(len(unexplained) / months, 2),
        }
    result: dict[str, Any] = {
        "table": name,
        "mornings": len(runs),
        "per_metric": per_metric,
        "echo_share": round(echoes / lines, 3) if lines else 0.0,
        "recovery_share": round(recoveries / lines, 3) if lines else 0.0,
        "repeat_share": round(repeats / announced, 3) if announced else 0.0,
        "announcements": announced,
        "mornings_not_scanned": sum(1 for r in runs if r.end is None),
        "labelled_expected": [f"{r.end} {x}" for r in runs for x in r.expected],
    }
    if planted is not None:
        result.update(_planted(runs, planted, length))
    else:  # a real table: what was told, to read against what happened
        result["told"] = [
            f"{r.end} {m} {s or 'total'} {'+' if sign > 0 else '-'}" for r in runs for m, s, sign, _ in r.told
        ]
    return result


def _explained(r: Morning, metric: str, length: int, planted: Planted | None) -> bool:
    if planted is None or r.end is None:
        return False
    start = r.end - timedelta(days=length - 1)
    for m, s, _, members in r.told:
        if m != metric:
            continue
        stations = {x.split("=", 1)[1] for x in [s, *members] if "=" in x}
        for where, a, b in planted.events:
            if a <= r.end and b >= start and (where is None or not stations or where in stations):
                return True
    return False


def _planted(runs: list[Morning], planted: Planted, length: int) -> dict[str, Any]:
    by_end = {r.end: r for r in runs if r.end}
    hits, ranks, told = 0, [], 0
    for station, d in planted.drops:
        series = f"station={station}"
        for k in range(length):
            r = by_end.get(d + timedelta(days=k))
            if r is None:
                continue
            flagged = [f for f in r.flagged if f[0] == "riders" and f[1] == series and f[2] < 0]
            if flagged:
                hits += 1
                order = [t for t in r.told]
                place = next((n + 1 for n, t in enumerate(order) if series in [t[1], *t[3]]), None)
                if place is not None:
                    told += 1
                    ranks.append(place)
                break
    declines = []
    for station, first, bottom in planted.declines:
        series = f"station={station}"
        during = [r for r in runs if r.end and first <= r.end <= bottom + timedelta(days=14)]
        hit = [r.end for r in during if any(f[:2] == ("riders", series) and f[2] < 0 for f in r.flagged)]
        day = hit[0] if hit else None
        said = sum(1 for r in runs if r.end and first <= r.end <= bottom + timedelta(days=21)
                   for t in r.told if t[0] == "riders" and series in [t[1], *t[3]])  # fmt: skip
        first_day = None if day is None else (day - first).days + 1
        declines.append({"station": station, "first_flag_day": first_day, "announcements": said})
    outage = planted.outage
    assert outage is not None
    after = [r for r in runs if r.end and outage < r.end <= outage + timedelta(days=35)]
    rises = sum(1 for r in after for f in r.flagged if f[2] > 0 and f[1] == "")
    stale_morning = next((r for r in runs if r.end == outage - timedelta(days=1) and r.stale), None)
    return {
        "drops_flagged": f"{hits}/{len(planted.drops)}",
        "drops_recall": round(hits / len(planted.drops), 3),
        "drops_announced": told,
        "drops_median_rank": statistics.median(ranks) if ranks else None,
        "declines": declines,
        "stale_alert_for_missing_load": stale_morning is not None,
        "total_rises_flagged_5w_after_outage": rises,
    }


def real_tables() -> list[tuple[str, pd.DataFrame, dict[str, Any]]]:
    """The shared real daily tables, each with its metrics and scanned dimensions."""
    out = []
    deaths = pd.read_csv(SHARED / "pr_deaths.csv", parse_dates=["date"])
    deaths["date"] = deaths["date"].dt.date
    out.append(("pr_deaths", deaths, {"metrics": ["deaths"]}))
    flights = pd.concat([pd.read_csv(SHARED / f"flights_2013q{q}.csv") for q in (1, 2, 4)])
    flights["date"] = pd.to_datetime(flights["sched_dep"]).dt.date
    flights = flights.groupby(["date", "origin", "carrier"]).size().rename("flights").reset_index()
    out.append(("flights_2013", flights, {"metrics": ["flights"], "scan_segments": ["origin", "carrier"]}))
    pizza = pd.read_csv(SHARED / "pizza_sales_2015.csv")
    pizza["date"] = pd.to_datetime(pizza["ordered_at"]).dt.date
    pizza = pizza.groupby(["date", "size", "type"]).size().rename("pizzas").reset_index()
    out.append(("pizza_2015", pizza, {"metrics": ["pizzas"], "scan_segments": ["size", "type"]}))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--window", action="append", help="WINDOW:BASELINE, e.g. 1d:wow (repeatable)")
    parser.add_argument("--days", type=int, default=1096, help="days of generated history")
    parser.add_argument("--no-real", action="store_true", help="skip the shared real tables")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--only", help="replay only this table (generated, pr_deaths, flights_2013, pizza_2015)"
    )
    parser.add_argument(
        "--last", type=int, default=0, help="replay only the last N mornings of each real table"
    )
    args = parser.parse_args()
    windows = args.window or ["1d:wow", "7d:previous"]
    results = []
    frame, planted, mornings = generate(args.days)
    tables: list[tuple[str, pd.DataFrame, dict[str, Any], Planted | None, list[date]]] = [
        ("generated", frame, {"metrics": ["riders", "incidents", "late/trips"], "scan_segments": ["station"]},
         planted, [*mornings, mornings[-1] + timedelta(days=1)]),
    ]  # fmt: skip
    if args.no_real:
        pass
    elif not SHARED.is_dir():
        print(f"{SHARED} is absent: replaying the generated table only", file=sys.stderr)
    else:
        for name, real, body in real_tables():
            days = sorted(set(real["date"]))
            have = set(days)
            todo = [d + timedelta(days=1) for d in days[56:]]  # each morning after a day with rows
            todo = [m for m in todo if m - timedelta(days=1) in have]
            tables.append((name, real, body, None, todo[-args.last :] if args.last else todo))
    for name, data, body, plant, todo in tables:
        if args.only and name != args.only:
            continue
        for spec in windows:
            window, baseline = spec.split(":")
            started = time.monotonic()
            cfg = {"time_column": "date", "window": window, "baseline": baseline, **body}
            runs = replay(data, cfg, todo)
            length = int(window.rstrip("d"))
            res = summarise(name, runs, body["metrics"], length, plant)
            res.update(window=spec, seconds=round(time.monotonic() - started, 1))
            results.append(res)
            print(json.dumps(res), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
