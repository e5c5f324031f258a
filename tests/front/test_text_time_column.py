"""Issue 39: a time column of text that does not read as dates is refused in one line naming the
column, how many of its values do not read, a column that does hold dates and what to do, before
any kernel starts (the engine's cast used to fail later with its raw message); text that does read
as dates is read as today."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from investigator.config import MetricDefinition
from investigator.errors import DataError
from investigator.request import Request
from investigator.sources.resolve import resolve

from ..conftest import cli
from .test_early_refusals import _run

REFUSAL = (
    "error: time column 'label' holds text that does not read as dates (60 of its 60 values): "
    "name the column of dates ('day' holds them) as the time column, or write these values as dates "
    "like 2026-03-29 "
    "(or 2026-03-29 14:05, 2024-03, 2024-Q1, 2024)"
)


def frame() -> pd.DataFrame:
    days = pd.date_range("2026-01-01", periods=60)
    return pd.DataFrame(
        {
            "day": days.strftime("%Y-%m-%d"),  # text that reads as dates
            "label": [f"item-{i:02d}" for i in range(60)],  # text that does not
            "x": [100.0] * 53 + [60.0] * 7,
            "region": ["EU", "US"] * 30,
        }
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("text-time")
    csv, parquet = folder / "labels.csv", folder / "text.parquet"
    frame().to_csv(csv, index=False)
    frame().to_parquet(parquet, index=False)  # Parquet keeps `day` as text: DuckDB does not sniff it
    return csv, parquet


def test_the_cli_refuses_text_that_is_no_dates_in_one_line_before_a_kernel_starts(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    code, err, servers = _run(tmp_path, "--data", str(files[0]), "--metric", "x", "--time-column", "label")
    assert (code, err) == (2, REFUSAL)
    assert servers == ""  # refused before any sandbox server started
    described = cli("describe", str(files[0]), "--time-column", "label")
    assert (described.returncode, described.stderr.strip()) == (2, REFUSAL)


def test_describe_reads_text_that_is_dates_as_today(files: tuple[Path, Path]) -> None:
    described = cli("describe", str(files[1]), "--time-column", "day")
    assert described.returncode == 0, described.stderr
    assert "2026-01-01" in described.stdout and "2026-03-01" in described.stdout


def test_a_run_reads_text_that_is_dates_into_its_windows(files: tuple[Path, Path]) -> None:
    spec, _ = resolve(
        Request(metric="sum(x)", time_column="day", window="7d"), files[1], MetricDefinition(expression="x")
    )
    assert (spec.current.start, spec.current.end) == (date(2026, 2, 23), date(2026, 3, 1))


def test_the_notebook_function_gives_the_same_refusal(tmp_path: Path) -> None:
    from investigator import investigate

    with pytest.raises(DataError) as refused:
        investigate(frame(), metric="x", time_column="label", runs_dir=str(tmp_path / "runs"))
    assert f"error: {refused.value}" == REFUSAL
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_the_refusal_names_no_column_when_none_holds_dates(tmp_path: Path) -> None:
    """Every other column is text that is no dates, or numbers: the refusal names none."""
    path = tmp_path / "no-dates.parquet"
    frame().drop(columns=["day"]).to_parquet(path, index=False)
    with pytest.raises(DataError) as refused:
        resolve(Request(metric="x", time_column="label", window="7d"), path, MetricDefinition(expression="x"))
    assert str(refused.value).startswith(
        "time column 'label' holds text that does not read as dates (60 of its 60 values): name the column "
        "of dates as the time column"
    )


def test_the_refusal_names_a_column_of_text_that_reads_as_dates(files: tuple[Path, Path]) -> None:
    """In the Parquet file `day` is text (no type says it is dates): its values are read to find it."""
    with pytest.raises(DataError) as refused:
        resolve(
            Request(metric="x", time_column="label", window="7d"), files[1], MetricDefinition(expression="x")
        )
    assert "name the column of dates ('day' holds them) as the time column" in str(refused.value)
