"""A triage job reads a table or a query behind a connection URL (`table:` / `sql:`, for the job or
one metric), and a query there is held to what `--sql` is (issue 25): one read-only SELECT, else the
config is refused in one line naming the key, before anything is sent. A real DuckDB file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from investigator.sources.synth import generate

from .test_job import DIMS, triage


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """A DuckDB file: sales with a planted drop in channel=social, and a table nobody may drop."""
    frame, _ = generate(
        "segment_change", seed=3, dims=DIMS, days=70, scale=20, segment={"channel": "social"}, factor=0.4
    )
    path = tmp_path / "shop.ddb"
    con = duckdb.connect(str(path))
    con.register("frame", frame)
    con.execute("CREATE TABLE sales AS SELECT * FROM frame")
    con.execute("CREATE TABLE keepme AS SELECT 1 AS x UNION ALL SELECT 2")
    con.close()
    return path


def write(folder: Path, **body: Any) -> Path:
    base = {
        "time_column": "date",
        "window": "7d",
        "dimensions": ["country", "channel"],
        "scan_segments": ["channel"],
        "budget": {"max_investigations": 1, "max_minutes": 10},
        "planner": "offline",
        "sandbox": "local",
        "max_iterations": 8,
        "state": str(folder / "state" / "triage.sqlite"),
        "runs_dir": str(folder / "runs"),
    }
    path = folder / "triage.yaml"
    path.write_text(yaml.safe_dump({**base, **body}, sort_keys=False))
    return path


def tables(path: Path) -> list[str]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return sorted(
            r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        )
    finally:
        con.close()


DELETES_IN_A_CTE = "with x as (delete from keepme returning *) select * from x"


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({"sql": "select * from sales; drop table keepme", "metrics": ["revenue"]}, "`sql`"),
        ({"metrics": [{"metric": "revenue", "sql": DELETES_IN_A_CTE}]}, "`metrics[0].sql`"),
    ],
    ids=["job", "metric"],
)  # fmt: skip
def test_a_query_that_writes_is_refused_in_one_line_naming_the_key(
    shop: Path, tmp_path: Path, body: dict[str, Any], key: str
) -> None:
    out = triage("--config", str(write(tmp_path, data=f"duckdb:///{shop}", **body)))
    assert out.exit_code == 2
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert f"{key}: must be exactly one read-only SELECT, but it " in out.stderr
    assert "set table: <view>" in out.stderr
    assert tables(shop) == ["keepme", "sales"] and not (tmp_path / "runs").exists()


def test_a_query_behind_a_url_is_scanned_and_investigated(shop: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        data=f"duckdb:///{shop}",
        sql="select * from sales where revenue >= 0",
        metrics=["revenue", {"metric": "orders", "table": "sales"}],
    )
    out = triage("--config", str(path), "--json", str(tmp_path / "digest.json"))
    assert out.exit_code == 0, out.stderr
    digest = json.loads((tmp_path / "digest.json").read_text())
    assert [s for s in digest["scanned"] if s.get("error")] == []
    flagged = {(s["metric"], json.dumps(s["segment"])) for s in digest["scanned"] if s["flagged"]}
    assert ("revenue", json.dumps({"channel": "social"})) in flagged
    [run] = digest["investigated"]  # the verdict is the verdict's tests' business: here, what it read
    assert run["status"] == "concluded" and run["metric"] == "revenue"
    inputs = json.loads(Path(run["report"]).with_suffix(".json").read_text())["inputs"]
    assert inputs["sql"] == "select * from sales where revenue >= 0" and inputs["data"].endswith("shop.ddb")
    assert tables(shop) == ["keepme", "sales"]
