"""A copied block of rows is found where the rows live: the engine counts distinct rows (over every
column) in the periods the duplicate check suspects, and the extract carries those counts."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.report.model import Report

from .conftest import load_duckdb, load_sqlite
from .test_engines import run

END = date(2026, 3, 29)
COPIED = [END - timedelta(days=k) for k in (2, 3, 4)]


@pytest.fixture(scope="module", params=["everywhere", "one segment"])
def copied(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Order rows over 70 days; 8% of three days' rows in the current week loaded twice (or a
    quarter of one segment's rows: the copies must not read as that segment's growth)."""
    rng = np.random.default_rng(11)
    parts = []
    for d in pd.date_range(END - timedelta(days=69), END, freq="D"):
        n = int(rng.poisson(3000))
        parts.append(pd.DataFrame({
            "date": d.date(), "country": rng.choice(["US", "DE", "FR"], n),
            "platform": rng.choice(["ios", "web"], n), "order_id": rng.integers(0, 10**9, n),
            "revenue": rng.gamma(2, 20, n).round(2),
        }))  # fmt: skip
    frame = pd.concat(parts, ignore_index=True)
    on = frame["date"].isin(COPIED)
    if request.param == "one segment":
        on &= (frame["country"] == "US") & (frame["platform"] == "web")
    share = 0.08 if request.param == "everywhere" else 0.5
    frame = pd.concat([frame, frame[on].sample(frac=share, random_state=1)], ignore_index=True)
    path = tmp_path_factory.mktemp("copied") / "orders.parquet"
    frame.to_parquet(path, index=False)
    return path


def copies(report: Report) -> tuple[float | None, str]:
    """The duplicates cause: the revenue the copies added, and its evidence."""
    found = [c for c in report.root_causes if c.detail == "duplicates"]
    assert found, (report.conclusion, [c.model_dump() for c in report.root_causes])
    return found[0].change, found[0].evidence


@pytest.mark.parametrize("engine", ["file", "duckdb", "sqlite"])
def test_a_copied_block_is_flagged(copied: Path, engine: str, tmp_path: Path) -> None:
    data = str(copied)
    if engine == "duckdb":
        load_duckdb(tmp_path / "shop.ddb", "orders", copied)
        data = f"duckdb:///{tmp_path / 'shop.ddb'}"
    elif engine == "sqlite":
        load_sqlite(tmp_path / "shop.db", "orders", pd.read_parquet(copied))
        data = f"sqlite:///{tmp_path / 'shop.db'}"
    report = run("revenue", data, tmp_path / "runs", **({} if engine == "file" else {"table": "orders"}))
    added, evidence = copies(report)
    extra = pd.read_parquet(copied)
    extra = extra[extra["date"].isin(COPIED)]
    truth = float(extra["revenue"].sum() - extra.drop_duplicates()["revenue"].sum())
    assert added == pytest.approx(truth, rel=1e-9)
    assert evidence.startswith("3 days in the current window have 8% duplicated rows"), evidence
