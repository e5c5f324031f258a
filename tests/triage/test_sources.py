"""A triage job reads a table or a query behind a connection URL (`table:` / `sql:`, for the job or
one metric), and a query there is held to what `--sql` is (issue 25): one read-only SELECT, else the
config is refused in one line naming the key, before anything is sent. A real DuckDB file."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml

from investigator.sources.synth import generate

from ..sources.conftest import Postgres, load_postgres, postgres  # noqa: F401  # the throwaway cluster fixture
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
        "max_iterations": 10,
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
        budget={"max_investigations": 2, "max_minutes": 10},
    )
    out = triage("--config", str(path), "--json", str(tmp_path / "digest.json"))
    assert out.exit_code == 0, out.stderr
    digest = json.loads((tmp_path / "digest.json").read_text())
    assert [s for s in digest["scanned"] if s.get("error")] == []
    flagged = {(s["metric"], json.dumps(s["segment"])) for s in digest["scanned"] if s["flagged"]}
    assert ("revenue", json.dumps({"channel": "social"})) in flagged
    expected = {"revenue": ("select * from sales where revenue >= 0", None), "orders": (None, "sales")}
    assert {run["metric"] for run in digest["investigated"]} == set(expected)
    for run in digest["investigated"]:  # the verdict is the verdict's tests' business: here, what it read
        assert run["status"] == "concluded"
        inputs = json.loads(Path(run["report"]).with_suffix(".json").read_text())["inputs"]
        assert (inputs["sql"], inputs["table"]) == expected[run["metric"]]
        assert inputs["data"].endswith("shop.ddb")
    assert tables(shop) == ["keepme", "sales"]


def scanned(tmp_path: Path, path: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    out = triage("--config", str(path), "--dry-run", "--json", str(tmp_path / "dry.json"), env=env)
    assert out.exit_code == 0, out.stderr
    digest: dict[str, Any] = json.loads((tmp_path / "dry.json").read_text())
    assert [s for s in digest["scanned"] if s.get("error")] == []
    return digest


def social(digest: dict[str, Any], metric: str) -> dict[str, Any]:
    [item] = [s for s in digest["scanned"] if s["metric"] == metric and s["segment"] == {"channel": "social"}]
    return item


def test_a_duckdb_file_url_named_through_env_with_a_table(shop: Path, tmp_path: Path) -> None:
    path = write(tmp_path, data="env:SHOP_URL", table="sales", metrics=["revenue", "orders/sessions"])
    digest = scanned(tmp_path, path, env={"SHOP_URL": f"duckdb:///{shop}"})
    assert social(digest, "revenue")["flagged"] and social(digest, "revenue")["change_pct"] < -0.4
    assert not social(digest, "orders/sessions")["flagged"]  # the drop is in volume, not conversion


def test_a_sqlite_file_read_through_a_query(shop: Path, tmp_path: Path) -> None:
    frame = duckdb.connect(str(shop), read_only=True).execute("select * from sales").df()
    frame["date"] = frame["date"].astype(str)  # SQLite keeps dates as text
    db = tmp_path / "shop.sqlite"
    with sqlite3.connect(db) as con:
        frame.to_sql("sales", con, index=False)
    query = "select date, country, channel, revenue, orders from sales where country <> 'FR'"
    path = write(tmp_path, data=f"sqlite:///{db}", sql=query, metrics=["revenue", "orders"])
    digest = scanned(tmp_path, path)
    expected = frame[(frame["country"] != "FR") & (frame["channel"] == "social")]
    week = expected[expected["date"] >= "2026-03-23"]["revenue"].sum()
    assert social(digest, "revenue")["current"] == pytest.approx(week)
    assert social(digest, "revenue")["flagged"]


def test_a_metric_whose_definition_names_its_own_data_and_table(shop: Path, tmp_path: Path) -> None:
    configs = tmp_path / "configs"
    configs.mkdir()
    (configs / "metrics.yaml").write_text(
        yaml.safe_dump(
            {"metrics": {"shop_revenue": {"expression": "sum(revenue)", "data": f"duckdb:///{shop}",
                                          "table": "sales"}}}
        )
    )  # fmt: skip
    path = write(tmp_path, metrics=["shop_revenue"])  # the job names no data of its own
    digest = scanned(tmp_path, path, env={"INVESTIGATOR_CONFIG_DIR": str(configs)})
    assert social(digest, "shop_revenue")["flagged"]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"data": "env:SHOP_URL", "metrics": ["revenue"]}, "write `table: NAME` or `sql: select ...`"),
        (
            {"data": "sales.parquet", "table": "sales", "metrics": ["revenue"]},
            "`table` names data in a database",
        ),
    ],
)
def test_a_url_without_a_table_is_a_config_error_in_the_configs_words(
    tmp_path: Path, body: dict[str, Any], expected: str
) -> None:
    out = triage("--config", str(write(tmp_path, **body)), env={"SHOP_URL": "duckdb:///x.ddb"})
    assert out.exit_code == 2 and expected in out.stderr and "--table" not in out.stderr, out.stderr


def test_a_postgres_table_named_through_env(shop: Path, tmp_path: Path, postgres: Postgres) -> None:  # noqa: F811
    frame = duckdb.connect(str(shop), read_only=True).execute("select * from sales").df()
    load_postgres(postgres, "triage_sales", frame[["date", "country", "channel", "revenue"]])
    path = write(tmp_path, data="env:PG_URL", table="triage_sales", metrics=["revenue"])
    digest = scanned(tmp_path, path, env={"PG_URL": postgres.url()})
    assert social(digest, "revenue")["flagged"]
