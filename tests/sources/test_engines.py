"""The same planted causes found the same way wherever the rows live: a Parquet file, a DuckDB
database, SQLite and a real PostgreSQL server (the engine aggregates, the kernel reads the extract)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.report.model import Report
from investigator.request import build_request
from investigator.run.state import load
from investigator.runner import investigate, resume
from investigator.sources.extract import EXTRACT_FILE

from ..conftest import write_synth
from .conftest import CANARY, Postgres, findings, load_duckdb, load_postgres, load_sqlite, same

SCENARIOS: dict[str, tuple[str, dict[str, Any], str]] = {  # name -> (cause, generate kwargs, metric)
    "segment": ("segment_change", {"seed": 3, "segment": {"channel": "social"}, "factor": 0.5}, "revenue"),
    "duplicates": ("duplicates", {"seed": 5}, "revenue"),
    "ratio": ("mix_shift", {"seed": 7}, "revenue/orders"),
}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Report]]:
    """Each scenario as Parquet, and the report investigating the file gives: the reference."""
    folder = tmp_path_factory.mktemp("planted")
    out = {}
    for name, (cause, kw, metric) in SCENARIOS.items():
        path, _ = write_synth(folder, cause, **kw)
        out[name] = (path, run(metric, str(path), folder / "runs"))
    return out


def run(metric: str, data: str | None, runs: Path, **kw: Any) -> Report:
    settings = load_settings(sandbox="inprocess", runs_dir=runs)
    request = build_request(metric, data, "7d", None, "previous", None, None, None, **kw)
    return investigate(request, settings)


def assert_same(reference: Report, got: Report) -> None:
    assert reference.root_causes, "the reference found no cause: the scenario is not a test"
    assert same(findings(reference), findings(got)) == []


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_duckdb_database_gives_the_files_answer(
    planted: dict[str, tuple[Path, Report]], scenario: str, tmp_path: Path
) -> None:
    path, reference = planted[scenario]
    load_duckdb(tmp_path / "shop.ddb", "sales", path)
    got = run(SCENARIOS[scenario][2], f"duckdb:///{tmp_path / 'shop.ddb'}", tmp_path / "runs", table="sales")
    assert_same(reference, got)


@pytest.mark.parametrize("scenario", ["segment", "duplicates"])
def test_sqlite_gives_the_files_answer(
    planted: dict[str, tuple[Path, Report]], scenario: str, tmp_path: Path
) -> None:
    path, reference = planted[scenario]
    load_sqlite(tmp_path / "shop.db", "sales", pd.read_parquet(path))
    got = run(SCENARIOS[scenario][2], f"sqlite:///{tmp_path / 'shop.db'}", tmp_path / "runs", table="sales")
    assert_same(reference, got)


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_postgres_gives_the_files_answer(
    planted: dict[str, tuple[Path, Report]], postgres: Postgres, scenario: str, tmp_path: Path
) -> None:
    path, reference = planted[scenario]
    load_postgres(postgres, f"sales_{scenario}", pd.read_parquet(path))
    got = run(SCENARIOS[scenario][2], postgres.url(), tmp_path / "runs", table=f"sales_{scenario}")
    assert_same(reference, got)


def test_a_query_as_the_source(
    planted: dict[str, tuple[Path, Report]], postgres: Postgres, tmp_path: Path
) -> None:
    path, reference = planted["segment"]
    load_postgres(postgres, "sales_q", pd.read_parquet(path))
    got = run("revenue", postgres.url(), tmp_path / "runs", sql="select * from sales_q where revenue >= 0")
    assert_same(reference, got)


def test_the_run_keeps_no_password_and_resumes_from_its_extract(
    planted: dict[str, tuple[Path, Report]],
    postgres: Postgres,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, reference = planted["segment"]
    load_postgres(postgres, "sales_env", pd.read_parquet(path))
    monkeypatch.setenv("SHOP_DB_URL", postgres.url())
    report = run("revenue", "env:SHOP_DB_URL", tmp_path / "runs", table="sales_env")
    folder = tmp_path / "runs" / report.run_id
    state = load(folder)
    assert state.request.data == "env:SHOP_DB_URL" and state.request.table == "sales_env"
    assert state.data_path == str(folder / EXTRACT_FILE)
    leaks = [p for p in folder.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]
    assert leaks == []
    monkeypatch.delenv("SHOP_DB_URL")  # resume needs no credentials: the extract is in the run
    again = resume(report.run_id, load_settings(sandbox="inprocess", runs_dir=tmp_path / "runs"))
    assert same(findings(reference), findings(again)) == []


def test_identifiers_and_labels_are_judged_in_postgres_as_on_the_file(
    planted: dict[str, tuple[Path, Report]], postgres: Postgres, tmp_path: Path
) -> None:
    """PostgreSQL counts distinct values its own way (hashed, one SELECT DISTINCT per column) and
    reads both windows' labels in one query: the same dimensions are left out, with the same notes."""
    frame = pd.read_parquet(planted["segment"][0])
    day = pd.to_datetime(frame["date"])
    last = day.max()
    frame["order_id"] = [f"o{i}" for i in range(len(frame))]  # an identifier: one row each
    frame["season"] = "dry"  # a label of the periods: one value in the window, another before
    frame.loc[day > last - pd.Timedelta(days=7), "season"] = "wet"
    path = tmp_path / "ids.parquet"
    frame.to_parquet(path)
    reference = run("revenue", str(path), tmp_path / "file")
    load_postgres(postgres, "sales_ids", frame)
    got = run("revenue", postgres.url(), tmp_path / "runs", table="sales_ids")
    ref_spec, got_spec = (load(tmp_path / d / r.run_id).spec for d, r in (("file", reference), ("runs", got)))
    assert "order_id" not in ref_spec.dimensions and "season" not in ref_spec.dimensions
    assert got_spec.dimensions == ref_spec.dimensions and got_spec.notes == ref_spec.notes
    assert_same(reference, got)
