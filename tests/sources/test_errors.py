"""What goes wrong reaching a database is said in one line (exit 2), never with the password, and
leaves nothing in runs/."""

from __future__ import annotations

import socket
from pathlib import Path

import pandas as pd
import pytest

from investigator.errors import UserError
from investigator.sources.urls import redact, scrub

from ..conftest import cli, write_synth
from .conftest import CANARY, Postgres, load_duckdb, load_postgres
from .test_engines import run


@pytest.fixture(scope="module")
def shop(postgres: Postgres, tmp_path_factory: pytest.TempPathFactory) -> Postgres:
    path, _ = write_synth(tmp_path_factory.mktemp("shop"), "segment_change", seed=3)
    load_postgres(postgres, "sales", pd.read_parquet(path))
    return postgres


def refused(tmp_path: Path, metric: str, data: str, **kw: str) -> str:
    with pytest.raises(UserError) as e:
        run(metric, data, tmp_path / "runs", **kw)
    assert e.value.exit_code == 2
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    assert CANARY not in str(e.value) and "wrong-pw" not in str(e.value)
    return str(e.value)


def test_unreachable_server(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here once the socket closes
    message = refused(
        tmp_path, "revenue", f"postgres://analyst:{CANARY}@127.0.0.1:{port}/shop", table="sales"
    )
    assert message.startswith("cannot reach postgres://analyst@127.0.0.1:")


def test_bad_credentials(shop: Postgres, tmp_path: Path) -> None:
    message = refused(tmp_path, "revenue", shop.url(password="wrong-pw"), table="sales")
    assert message.startswith("bad credentials for postgres://analyst@")


def test_missing_table(shop: Postgres, tmp_path: Path) -> None:
    assert "table nosuch not found" in refused(tmp_path, "revenue", shop.url(), table="nosuch")


def test_missing_column(shop: Postgres, tmp_path: Path) -> None:
    assert "metric column 'profit' not found" in refused(tmp_path, "profit", shop.url(), table="sales")


def test_no_permission(shop: Postgres, tmp_path: Path) -> None:
    message = refused(tmp_path, "revenue", shop.url(user="outsider", password="outsider-pw"), table="sales")
    assert message.startswith("no permission to read table sales")


def test_driver_not_installed(tmp_path: Path) -> None:
    message = refused(tmp_path, "revenue", f"mysql://analyst:{CANARY}@127.0.0.1:3306/shop", table="sales")
    assert "mysql driver is not installed" in message and "ibis-framework[mysql]" in message


def test_a_url_needs_a_table_or_a_query(tmp_path: Path) -> None:
    assert "--table NAME or --sql" in refused(tmp_path, "revenue", "duckdb:///nowhere.ddb")


def test_env_variable_not_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_DB_URL", raising=False)
    message = refused(tmp_path, "revenue", "env:NO_SUCH_DB_URL", table="sales")
    assert "NO_SUCH_DB_URL is not set" in message


def test_the_command_line_exits_2_without_the_password(shop: Postgres, tmp_path: Path) -> None:
    r = cli("--data", shop.url(password="wrong-pw"), "--table", "sales", "--metric", "revenue",
            "--runs-dir", str(tmp_path / "runs"))  # fmt: skip
    assert r.returncode == 2, r.stderr
    assert "bad credentials" in r.stderr and "wrong-pw" not in r.stderr + r.stdout
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_redact_and_scrub() -> None:
    url = f"postgres://analyst:{CANARY}@db.example:5432/shop?sslmode=require&token=t0k"
    assert redact(url) == "postgres://analyst@db.example:5432/shop"
    assert redact("env:SALES_DB_URL") == "env:SALES_DB_URL"
    assert redact("spark://local[2]") == "spark://local[2]"
    assert CANARY not in scrub(f"failed for {url} with password {CANARY}", url)


def test_an_extract_too_large_is_refused_before_it_is_fetched(tmp_path: Path) -> None:
    from investigator.request import Request, metric_definition
    from investigator.sources import source_for
    from investigator.sources.extract import write_extract
    from investigator.sources.resolve import resolve

    path, _ = write_synth(tmp_path, "segment_change", seed=3)
    load_duckdb(tmp_path / "shop.ddb", "sales", path)
    source = source_for(f"duckdb:///{tmp_path / 'shop.ddb'}", "sales")
    spec, table = resolve(Request(metric="revenue"), source, metric_definition("revenue"))
    with pytest.raises(UserError, match="would hold more than 1,000 rows"):
        write_extract(table, spec, tmp_path / "extract.parquet", max_rows=1000)
    assert not (tmp_path / "extract.parquet").exists()


def test_a_missing_database_file_is_named(tmp_path: Path) -> None:
    for url in (f"duckdb:///{tmp_path / 'nosuch.ddb'}", f"sqlite:///{tmp_path / 'nosuch.db'}"):
        message = refused(tmp_path, "revenue", url, table="sales")
        assert message.startswith(f"no database file at {url}: check the path in the URL"), message
        assert "server" not in message
    assert not (tmp_path / "nosuch.ddb").exists() and not (tmp_path / "nosuch.db").exists()


def test_an_unknown_host_is_named(tmp_path: Path) -> None:
    message = refused(tmp_path, "revenue", f"postgres://analyst:{CANARY}@nosuch.invalid:5432/shop", table="x")
    assert message.startswith(
        "cannot reach postgres://analyst@nosuch.invalid:5432/shop: the host name is not known"
    )


def test_a_refused_connection_is_named(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    message = refused(tmp_path, "revenue", f"postgres://analyst:{CANARY}@127.0.0.1:{port}/shop", table="x")
    assert "nothing listens there" in message


def test_a_missing_postgres_database_is_named(postgres: Postgres, tmp_path: Path) -> None:
    message = refused(tmp_path, "revenue", postgres.url(db="no_such_db_7f3a"), table="sales")
    assert "database no_such_db_7f3a does not exist at postgres://" in message, message
    assert "server up" not in message
