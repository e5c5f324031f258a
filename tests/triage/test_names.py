"""A misspelt name in a triage config is a bad config: exit 2 before anything is written (no state,
no lock, no digest, no run folder), one line naming the key and the nearest name in the data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from investigator.sources.synth import generate

from .test_job import DIMS, triage


@pytest.fixture(scope="module")
def sales(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame, _ = generate("no_change", seed=2, dims=DIMS, days=70, scale=5)
    path = tmp_path_factory.mktemp("names") / "sales.parquet"
    frame.to_parquet(path, index=False)
    return path


def write(folder: Path, sales: Path, **body: Any) -> Path:
    base = {
        "data": str(sales),
        "metrics": ["revenue"],
        "scan_segments": ["channel"],
        "state": str(folder / "state" / "triage.sqlite"),
        "runs_dir": str(folder / "runs"),
    }
    path = folder / "triage.yaml"
    path.write_text(yaml.safe_dump({**base, **body}, sort_keys=False))
    return path


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"metrics": ["revenue", "revnue"]},
         "`metrics[1].metric`: 'revnue' is neither a configured metric nor a column of"),
        ({"metrics": ["orders/sesions"]}, "`metrics[0].metric`: metric 'orders/sesions''s column 'sesions'"),
        ({"metrics": ["count_distinct(user)"]}, "column 'user' is not in"),
        ({"time_column": "dat"}, "`time_column`: time column 'dat' is not in"),
        ({"metrics": [{"metric": "orders", "time_column": "Date"}]},
         "`metrics[0].time_column`: time column 'Date'"),
        ({"scan_segments": ["chanel"]}, "`scan_segments`: scan dimension 'chanel' is not in"),
        ({"metrics": [{"metric": "orders", "scan_segments": ["contry"]}]},
         "`metrics[0].scan_segments`: scan dimension 'contry' is not in"),
        ({"metrics": ["sum(revenue"]}, "`metrics[0].metric`"),
        ({"end": "2026-13"}, "`end`:"),
        ({"end": "someday"}, "`end`:"),
        ({"end": "0001-01-02"}, "reaches before year 1"),
    ],
    ids=["metric", "ratio-column", "distinct-column", "time-column", "metric-time-column", "scan-dimension",
         "metric-scan-dimension", "unparsable", "month-13", "not-a-date", "year-1"],
)  # fmt: skip
@pytest.mark.parametrize("dry", [False, True], ids=["run", "dry-run"])
def test_a_misspelt_name_exits_2_before_anything_is_written(
    tmp_path: Path, sales: Path, body: dict[str, Any], expected: str, dry: bool
) -> None:
    out = triage("--config", str(write(tmp_path, sales, **body)), *(["--dry-run"] if dry else []))
    assert out.exit_code == 2, (out.stdout, out.stderr)
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert expected in out.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["triage.yaml"]  # no state, lock or runs


@pytest.mark.parametrize(
    ("body", "near"),
    [
        ({"metrics": ["revnue"]}, "did you mean 'revenue'?"),
        ({"metrics": ["orders/sesions"]}, "did you mean 'sessions'?"),
        ({"time_column": "dat"}, "did you mean 'date'?"),
        ({"scan_segments": ["Channel"]}, "did you mean 'channel'?"),
    ],
)
def test_the_message_names_the_nearest_column(
    tmp_path: Path, sales: Path, body: dict[str, Any], near: str
) -> None:
    out = triage("--config", str(write(tmp_path, sales, **body)))
    assert out.exit_code == 2 and near in out.stderr, out.stderr


@pytest.mark.parametrize(("end", "last"), [("2026-02", "2026-02-28"), ("2026-03-22", "2026-03-22")])
def test_end_takes_the_forms_investigate_takes(tmp_path: Path, sales: Path, end: str, last: str) -> None:
    path = write(tmp_path, sales, end=end)
    out = triage("--config", str(path), "--dry-run", "--json", str(tmp_path / "d.json"))
    assert out.exit_code == 0, out.stderr
    [window_end] = {s["window_end"] for s in json.loads((tmp_path / "d.json").read_text())["scanned"]}
    assert window_end == last
