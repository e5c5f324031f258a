"""The periods analysts ask about (issue 30 §2), end to end on generated data: explicit ranges for
the window and the baseline, of equal or unequal length, and the trailing average `avgN`.

Every baseline number is checked by hand with pandas: the movement's, a segment's, and the planted
cause's share; refusals are exit 2 with one line that says what to write instead."""

from __future__ import annotations

import json
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.report.model import Report
from investigator.request import build_request
from investigator.runner import continue_run, investigate
from tests.conftest import cli, write_synth

END = date(2026, 3, 29)  # the generated data's last day; social's revenue halves in its last 7 days
WEEK = (date(2026, 3, 23), END)


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("periods")
    path, _ = write_synth(folder, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    return path


@pytest.fixture(scope="module")
def frame(data: Path) -> pd.DataFrame:
    df = pd.read_parquet(data)
    df["day"] = pd.to_datetime(df["date"]).dt.date
    return df


def total(df: pd.DataFrame, start: date, end: date, column: str = "revenue") -> float:
    return float(df.loc[(df["day"] >= start) & (df["day"] <= end), column].sum())


def run(
    tmp_path: Path, data: Path, window: str, baseline: str = "previous", end: str | None = None
) -> Report:
    settings = load_settings(sandbox="inprocess", runs_dir=tmp_path / "runs")
    ask = build_request("revenue", str(data), window, end, baseline, None, None, None, flag="--")
    return investigate(ask, settings)


def causes(report: Report) -> list[tuple[str, dict[str, str], float | None]]:
    return [(c.kind, dict(c.segment), c.contribution) for c in report.root_causes]


def test_an_equal_range_is_the_window_it_names(data: Path, frame: pd.DataFrame, tmp_path: Path) -> None:
    ranged = run(tmp_path / "a", data, "2026-03-23..2026-03-29", "2026-03-16..2026-03-22")
    plain = run(tmp_path / "b", data, "7d", "previous", "2026-03-29")
    assert ranged.movement == plain.movement and ranged.movement.z is not None
    assert ranged.window == plain.window and ranged.baseline.scale == plain.baseline.scale == 1.0
    assert ranged.baseline.model_dump(exclude={"kind"}) == plain.baseline.model_dump(exclude={"kind"})
    assert ranged.baseline.kind == "2026-03-16..2026-03-22"
    assert causes(ranged) == causes(plain) and causes(ranged)[0][1] == {"channel": "social"}
    assert [s.model_dump() for s in ranged.segments] == [s.model_dump() for s in plain.segments]
    assert ranged.inputs.window == "2026-03-23..2026-03-29"
    assert ranged.inputs.baseline == "2026-03-16..2026-03-22"
    # a window range without a baseline: the range of the same length before it
    alone = run(tmp_path / "c", data, "2026-03-23..2026-03-29")
    assert (alone.baseline.start, alone.baseline.end) == (date(2026, 3, 16), date(2026, 3, 22))
    assert alone.movement == plain.movement


def test_an_unequal_baseline_is_compared_per_day(data: Path, frame: pd.DataFrame, tmp_path: Path) -> None:
    base = (date(2026, 3, 2), date(2026, 3, 15))  # 14 days against the window's 7
    report = run(tmp_path, data, "2026-03-23..2026-03-29", "2026-03-02..2026-03-15")
    cur, was = total(frame, *WEEK), total(frame, *base) * 7 / 14
    assert report.movement.current == pytest.approx(cur)
    assert report.movement.baseline == pytest.approx(was)
    assert report.movement.change_pct == pytest.approx((cur - was) / was)
    assert report.baseline.scale == pytest.approx(0.5)
    social = frame[frame["channel"] == "social"]
    share = (total(social, *WEEK) - total(social, *base) / 2) / (cur - was)
    kind, segment, contribution = causes(report)[0]
    assert (kind, segment) == ("segment_change", {"channel": "social"})
    assert contribution == pytest.approx(share, abs=0.001)  # the host's check saw the same numbers
    assert report.root_causes[0].verified is True
    # the movement's text and the notes say it
    assert (
        "in 2026-03-23..2026-03-29 vs 2026-03-02..2026-03-15 per day (14 days scaled to the window's 7)"
        in (report.conclusion)
    )
    words = "per day: the baseline (2026-03-02 to 2026-03-15) is 14 days and the window 7 days"
    assert any(words in n for n in report.notes)


def mean_of_windows(df: pd.DataFrame, n: int, length: int = 7) -> float:
    starts = [WEEK[0] - timedelta(days=length * k) for k in range(1, n + 1)]
    return sum(total(df, s, s + timedelta(days=length - 1)) for s in starts) / n


def test_avg4_is_the_mean_of_the_four_windows_before(data: Path, frame: pd.DataFrame, tmp_path: Path) -> None:
    report = run(tmp_path, data, "7d", "avg4")
    assert (report.baseline.start, report.baseline.end) == (date(2026, 2, 23), date(2026, 3, 22))
    assert report.baseline.kind == "avg4" and report.baseline.scale == pytest.approx(0.25)
    assert report.movement.current == pytest.approx(total(frame, *WEEK))
    assert report.movement.baseline == pytest.approx(mean_of_windows(frame, 4))
    assert report.movement.significant is True and report.movement.z is not None
    social = frame[frame["channel"] == "social"]
    row = next(s for s in report.segments if s.segment == {"channel": "social"})
    assert row.baseline == pytest.approx(mean_of_windows(social, 4))  # a segment's mean, too
    assert row.current == pytest.approx(total(social, *WEEK))
    kind, segment, contribution = causes(report)[0]
    assert (kind, segment) == ("segment_change", {"channel": "social"})
    change = total(frame, *WEEK) - mean_of_windows(frame, 4)
    assert contribution == pytest.approx((row.current - row.baseline) / change, abs=0.001)
    assert report.root_causes[0].verified is True
    assert "vs the mean of the 4 windows of 7 days before (2026-02-23..2026-03-22)." in report.conclusion
    assert report.inputs.baseline == "avg4"
    # a resumed run reads the same baseline back from its checkpoint
    again = continue_run(report.run_id, load_settings(sandbox="inprocess", runs_dir=tmp_path / "runs"), 2)
    assert again.movement == report.movement and again.baseline == report.baseline
    assert causes(again)[0][:2] == ("segment_change", {"channel": "social"})


def test_avg_on_monthly_data_and_a_monthly_range(tmp_path: Path) -> None:
    months = pd.date_range("2022-01-31", periods=27, freq="ME").date
    rows = [{"date": d, "region": r, "value": 100.0 + i + (30 if r == "EU" and i == 26 else 0)}
            for i, d in enumerate(months) for r in ("EU", "US")]  # fmt: skip
    path = tmp_path / "monthly.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    out = tmp_path / "r.json"
    r = cli("--data", str(path), "--metric", "value", "--window", "2024-01-01..2024-03-31",
            "--baseline", "avg3", "--runs-dir", str(tmp_path / "runs"), "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    assert report["window"] == {"start": "2024-01-01", "end": "2024-03-31"}
    # the 3 windows of 3 months before: April to December 2023, their mean
    assert report["baseline"] == {"start": "2023-04-01", "end": "2023-12-31", "kind": "avg3",
                                  "scale": pytest.approx(1 / 3)}  # fmt: skip
    frame = pd.DataFrame(rows)
    frame["date"] = pd.to_datetime(frame["date"]).dt.date
    cur = frame[frame["date"] >= date(2024, 1, 1)]["value"].sum()
    before = frame[(frame["date"] >= date(2023, 4, 1)) & (frame["date"] <= date(2023, 12, 31))]
    assert report["movement"]["current"] == pytest.approx(cur) == 780
    assert report["movement"]["baseline"] == pytest.approx(before["value"].sum() / 3) == 714
    eu = next(s for s in report["segments"] if s["segment"] == {"region": "EU"})
    assert eu["baseline"] == pytest.approx(before.loc[before["region"] == "EU", "value"].sum() / 3)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--window", "2026-03-23..2026-03-29", "--baseline", "2026-03-20..2026-03-26"],
         "--baseline 2026-03-20..2026-03-26 overlaps the window 2026-03-23..2026-03-29: the baseline must "
         "end before 2026-03-23: try --baseline 2026-03-16..2026-03-22"),
        (["--window", "2026-03-23..2026-03-29", "--baseline", "2026-03-30..2026-04-05"],
         "comes after the window"),
        (["--window", "2026-03-23..2026-03-2"], "--window '2026-03-23..2026-03-2' is not a range of days: "
         "write the first and last day, e.g. --window 2026-03-01..2026-03-07"),
        (["--window", "2026-03-29..2026-03-23"], "ends before it starts: write the earlier day first, e.g. "
         "--window 2026-03-23..2026-03-29"),
        (["--baseline", "avg0"], "--baseline 'avg0' averages 0 windows: avgN takes N from 2 to 52, e.g. "
         "--baseline avg4"),
        (["--baseline", "avg100"], "avgN takes N from 2 to 52"),
        (["--baseline", "avg"], "write one of previous, wow, mom, qoq, yoy, avgN (e.g. avg4"),
        (["--window", "2026-03-23..2026-03-29", "--end", "2026-03-29"],
         "--end 2026-03-29 with --window 2026-03-23..2026-03-29: the range says where the window ends; "
         "drop --end, or write --window 7d --end 2026-03-29"),
        (["--baseline", "avg30"], "the avg30 baseline starts 2025-08-25, before the data; the data covers "
         "2025-11-30 to 2026-03-29: pick a later --end, a shorter --window or another --baseline (avg16 is "
         "the longest average the data holds)"),
    ],
)  # fmt: skip
def test_refusals_are_one_line_that_says_what_to_write(
    data: Path, tmp_path: Path, args: list[str], words: str
) -> None:
    r = cli("--data", str(data), "--metric", "revenue", *args, "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip()
    assert "\n" not in line and words in line, line
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_whole_periods_of_monthly_data(tmp_path: Path) -> None:
    months = pd.date_range("2022-01-31", periods=27, freq="ME").date
    path = tmp_path / "monthly.csv"
    pd.DataFrame({"date": months, "value": [100.0 + i for i in range(27)]}).to_csv(path, index=False)
    r = cli("--data", str(path), "--metric", "value", "--window", "2024-01-15..2024-03-31",
            "--runs-dir", str(tmp_path / "runs"))  # fmt: skip
    assert r.returncode == 2
    assert r.stderr.strip().removeprefix("error: ") == (
        "--window 2024-01-15..2024-03-31 is not whole months: the data is monthly: try --window "
        "2024-01-01..2024-03-31"
    )
    out = tmp_path / "r.json"
    ok = cli("--data", str(path), "--metric", "value", "--window", "2024-01-01..2024-03-31",
             "--baseline", "2023-10-01..2023-12-31", "--runs-dir", str(tmp_path / "runs"),
             "--json", str(out))  # fmt: skip
    assert ok.returncode == 0, ok.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    assert report["movement"]["current"] == pytest.approx(24 + 25 + 26 + 300)
    assert report["movement"]["baseline"] == pytest.approx(21 + 22 + 23 + 300)


def test_the_notebook_takes_the_same_strings(frame: pd.DataFrame) -> None:
    from investigator.errors import UserError
    from investigator.front.notebook import investigate as notebook

    with pytest.raises(UserError, match=r"^baseline 'avg0' averages 0 windows: avgN takes N from 2 to 52"):
        notebook(frame, "revenue", baseline="avg0")
    with pytest.raises(UserError, match=r"^end 2026-03-29 with window 2026-03-23\.\.2026-03-29: the range"):
        notebook(frame, "revenue", window="2026-03-23..2026-03-29", end="2026-03-29")
