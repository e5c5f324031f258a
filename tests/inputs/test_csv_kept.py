"""A CSV is parsed once into the engine's memory when it is small enough (a run asks a table dozens
of queries, and each would parse the file again); a larger one is read from the file each time."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from investigator.analysis import reading
from investigator.analysis.reading import open_table


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "d.csv"
    pd.DataFrame(
        {"day": pd.date_range("2026-01-01", periods=60).strftime("%Y-%m-%d"), "region": ["a", "b"] * 30,
         "revenue": range(60)}
    ).to_csv(path, index=False)  # fmt: skip
    return path


def test_a_small_csv_is_parsed_once_and_answers_from_memory(tmp_path: Path) -> None:
    path = _csv(tmp_path)
    table = open_table(path, "day")
    path.write_text("day,region,revenue\n2026-01-01,a,1000000\n")  # what a query would read now
    totals = table.group_by("region").aggregate(total=table.revenue.sum()).to_pandas()
    assert dict(zip(totals.region, totals.total, strict=True)) == {
        "a": sum(range(0, 60, 2)),
        "b": sum(range(1, 60, 2)),
    }
    assert table.day.type().is_date()


def test_a_csv_over_the_limit_is_read_from_the_file_by_each_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _csv(tmp_path)
    monkeypatch.setattr(reading, "KEEP_CSV_BYTES", path.stat().st_size - 1)
    table = open_table(path, "day")
    path.write_text("day,region,revenue\n2026-01-01,a,1000000\n")
    totals = table.group_by("region").aggregate(total=table.revenue.sum()).to_pandas()
    assert totals.to_dict("records") == [{"region": "a", "total": 1000000}]
