"""Time columns read as what they are: epoch units told apart, dates in the data's own time zone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.config import MetricDefinition
from investigator.errors import DataError
from investigator.request import Request
from investigator.sources.files import FileSource
from investigator.sources.resolve import resolve

DAYS = pd.date_range("2026-01-01", "2026-03-31")


def frame(times: object) -> pd.DataFrame:
    return pd.DataFrame({"ts": times, "country": "US", "revenue": np.linspace(10, 20, len(DAYS))})


@pytest.mark.parametrize(("unit", "per_second"), [("seconds", 1), ("milliseconds", 1000)])
def test_an_integer_epoch_is_read_in_its_unit(unit: str, per_second: int, tmp_path: Path) -> None:
    seconds = ((DAYS + pd.Timedelta(hours=13)) - pd.Timestamp("1970-01-01")) // pd.Timedelta("1s")
    path = tmp_path / "epoch.parquet"
    frame(np.asarray(seconds, dtype="int64") * per_second).to_parquet(path, index=False)
    spec, _ = resolve(
        Request(metric="sum(revenue)", time_column="ts"), path, MetricDefinition(expression="revenue")
    )
    assert spec.current.end == date(2026, 3, 31) and spec.current.start == date(2026, 3, 25)
    assert any(f"read as {unit} since 1970" in n for n in spec.notes)


def test_integers_of_no_known_unit_are_refused_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "ticks.parquet"
    frame(np.arange(5000, 5000 + len(DAYS))).to_parquet(path, index=False)
    with pytest.raises(DataError, match=r"time column 'ts' holds integers from 5000 to .*epoch seconds"):
        FileSource(path).open("ts")


def test_a_time_zone_keeps_the_day_of_the_data(tmp_path: Path) -> None:
    local = pd.date_range("2026-01-01", "2026-03-31", tz="Europe/Berlin")  # midnights, 23:00 UTC before
    path = tmp_path / "berlin.parquet"
    frame(local).to_parquet(path, index=False)
    spec, table = resolve(
        Request(metric="sum(revenue)", time_column="ts"), path, MetricDefinition(expression="revenue")
    )
    assert (spec.current.start, spec.current.end) == (date(2026, 3, 25), date(2026, 3, 31))
    assert str(table["ts"].max().to_pandas())[:10] == "2026-03-31"
    assert any("Europe/Berlin" in n for n in spec.notes)


def test_a_dataframe_with_a_time_zone_keeps_its_days() -> None:
    from investigator.analysis.queries import open_table

    notes: list[str] = []
    berlin = pd.date_range("2026-01-01", "2026-03-31", tz="Europe/Berlin")  # UTC: a day early
    table = open_table(frame(berlin), "ts", notes=notes)
    days = table.select("ts").to_pandas()["ts"]
    assert str(days.min())[:10] == "2026-01-01" and str(days.max())[:10] == "2026-03-31"
    assert notes and "Europe/Berlin" in notes[0]


def test_a_file_whose_time_is_an_integer_year_is_told_to_name_it(tmp_path: Path) -> None:
    path = tmp_path / "yearly.csv"
    pd.DataFrame(
        {"year": [2009, 2010, 2009, 2010], "region": ["a", "a", "b", "b"], "sales": [5, 6, 3, 4]}
    ).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"time column 'date' not found; columns are: year, region, sales; "
                       r"try --time-column year$"):  # fmt: skip
        resolve(
            Request(metric="sales", data=str(path), window="1y"), path, MetricDefinition(expression="sales")
        )


def test_a_misspelt_metric_on_the_users_file_names_its_columns_not_the_demo_metrics(tmp_path: Path) -> None:
    path = tmp_path / "yearly.csv"
    pd.DataFrame({"year": [2009, 2010], "sales": [5, 6]}).to_csv(path, index=False)
    request = Request(metric="salse", data=str(path), window="1y", time_column="year")
    with pytest.raises(DataError) as e:
        resolve(request, path, MetricDefinition(expression="salse"))
    assert str(e.value) == "metric column 'salse' not found; columns are: year, sales; did you mean 'sales'?"


def test_csv_timestamps_with_utc_offsets_keep_the_day_the_data_writes(tmp_path: Path) -> None:
    """`2026-03-31T23:30:00-08:00` is the 31st where it was written (the 1st of April in UTC), as a
    zoned Parquet column keeps its zone's days; offsets may differ from row to row (summer time)."""
    late = [f"{d:%Y-%m-%d}T23:30:00{'-07:00' if d >= pd.Timestamp('2026-03-08') else '-08:00'}" for d in DAYS]
    rows = frame(late).assign(revenue=[5.0 if d >= pd.Timestamp("2026-03-25") else 10.0 for d in DAYS])
    path = tmp_path / "offsets.csv"
    rows.to_csv(path, index=False)
    spec, table = resolve(
        Request(metric="sum(revenue)", time_column="ts"), path, MetricDefinition(expression="revenue")
    )
    assert (spec.current.start, spec.current.end) == (date(2026, 3, 25), date(2026, 3, 31))
    daily = table.group_by("ts").aggregate(r=table["revenue"].sum()).to_pandas().set_index("ts")["r"]
    assert len(daily) == len(DAYS) and set(daily) == {5.0, 10.0}  # one row a day, on its own day
    assert any("UTC offset" in n for n in spec.notes)

    r = subprocess.run(
        [sys.executable, "-m", "investigator", "--data", str(path), "--metric", "revenue",
         "--time-column", "ts", "--runs-dir", str(tmp_path / "runs"), "--json", "-"],
        capture_output=True, text=True, timeout=300, env={**os.environ, "INVESTIGATOR_WARM": "0"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["window"] == {"start": "2026-03-25", "end": "2026-03-31"}
    assert report["movement"]["current"] == 35.0 and report["movement"]["baseline"] == 70.0


def test_a_distinct_count_over_a_week_is_described_as_what_it_is(tmp_path: Path) -> None:
    """count_distinct is the window's distinct values; user-days are asked for by name and said so."""
    path = tmp_path / "events.csv"
    days = pd.date_range("2026-02-01", "2026-03-29", freq="D").repeat(3)
    pd.DataFrame({"date": days, "user_id": ["u1", "u2", "u1"] * (len(days) // 3), "os": "ios"}).to_csv(
        path, index=False
    )
    notes = {}
    for m in ("count_distinct(user_id)", "count_distinct_daily(user_id)"):
        spec, _ = resolve(
            Request(metric=m, data=str(path), window="7d"), path, MetricDefinition(expression=m)
        )  # fmt: skip
        notes[m] = spec.notes
    assert any("counted over each whole window" in n for n in notes["count_distinct(user_id)"])
    assert any(
        n.startswith("count_distinct_daily(user_id) over a window of 7 days is the sum of each day's")
        for n in notes["count_distinct_daily(user_id)"]
    )
    assert all(any("a value in two segments" in n for n in v) for v in notes.values())
