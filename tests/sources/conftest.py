"""Real engines for the source tests: a throwaway PostgreSQL cluster, DuckDB and SQLite files, and
planted-cause scenarios loaded into each."""

from __future__ import annotations

import io
import math
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from glob import glob
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.net import free_port

CANARY = "canary-Pw-7f3a9e"  # the analyst's password: it must never be found anywhere a run writes


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: starts an engine that takes seconds (still runs in CI)")


@dataclass(frozen=True)
class Postgres:
    host: str
    port: int

    def url(self, user: str = "analyst", password: str = CANARY, db: str = "shop") -> str:
        return f"postgres://{user}:{password}@{self.host}:{self.port}/{db}"


def _pg_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    versions = sorted(glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(versions[-1]).parent if versions else None


@pytest.fixture(scope="session")
def postgres() -> Iterator[Postgres]:
    """A PostgreSQL cluster in a temp dir on a free loopback port, password auth over TCP; stopped
    and removed afterwards."""
    bindir = _pg_bin()
    if bindir is None:
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: apt-get install postgresql")
    as_user: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="inv-pg-"))
    if os.geteuid() == 0:  # initdb refuses root: run the cluster as the postgres user
        try:
            entry = pwd.getpwnam("postgres")
        except KeyError:
            pytest.skip("running as root and there is no postgres user to own the test cluster")
        os.chown(root, entry.pw_uid, entry.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data, port = root / "data", free_port()
    pwfile = root / "pw"
    pwfile.write_text("super-secret-admin\n")
    if as_user:
        os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)

    def run(*cmd: str) -> None:
        subprocess.run([*as_user, *cmd], check=True, capture_output=True, timeout=120)

    run(str(bindir / "initdb"), "-D", str(data), "-U", "admin", f"--pwfile={pwfile}",
        "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8")  # fmt: skip
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(str(bindir / "pg_ctl"), "-D", str(data), "-o", opts, "-l", str(root / "log"), "-w", "start")
    try:
        pg = Postgres("127.0.0.1", port)
        with _admin(pg) as cur:
            cur.execute("CREATE DATABASE shop")
        with _admin(pg, "shop") as cur:
            cur.execute(f"CREATE ROLE analyst LOGIN PASSWORD '{CANARY}'")
            cur.execute("CREATE ROLE outsider LOGIN PASSWORD 'outsider-pw'")
        yield pg
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def _admin(pg: Postgres, db: str = "postgres") -> Any:
    import psycopg

    conn = psycopg.connect(
        host=pg.host, port=pg.port, user="admin", password="super-secret-admin", dbname=db, autocommit=True
    )
    return _Cursor(conn)


class _Cursor:
    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __enter__(self) -> Any:
        return self.conn.cursor()

    def __exit__(self, *exc: object) -> None:
        self.conn.close()


def load_postgres(pg: Postgres, name: str, frame: pd.DataFrame) -> None:
    """Copy a frame into table `name` of database shop, readable by the analyst only."""
    types = {"int64": "bigint", "float64": "double precision"}
    cols = ", ".join(
        f'"{c}" ' + ("date" if c == "date" else types.get(str(t), "text")) for c, t in frame.dtypes.items()
    )
    buf = io.StringIO()
    frame.to_csv(buf, index=False, header=False)
    with _admin(pg, "shop") as cur:
        cur.execute(f'DROP TABLE IF EXISTS "{name}"')
        cur.execute(f'CREATE TABLE "{name}" ({cols})')
        with cur.copy(f'COPY "{name}" FROM STDIN WITH (FORMAT csv)') as copy:
            copy.write(buf.getvalue())
        cur.execute(f'GRANT SELECT ON "{name}" TO analyst')


def load_duckdb(path: Path, name: str, parquet: Path) -> None:
    import duckdb

    con = duckdb.connect(str(path))
    con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM read_parquet('{parquet}')")
    con.close()


def load_sqlite(path: Path, name: str, frame: pd.DataFrame) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    out = frame.copy()
    out["date"] = out["date"].astype(str)
    out.to_sql(name, con, index=False, if_exists="replace")
    con.close()


def same(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two report dumps differ, floats compared to 1e-9 relative (sums in another order)."""
    if isinstance(a, float) and isinstance(b, float | int):
        return [] if math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6) else [f"{path}: {a} != {b}"]
    if isinstance(a, dict) and isinstance(b, dict):
        if a.keys() != b.keys():
            return [f"{path}: keys {sorted(a)} != {sorted(b)}"]
        return [d for k in a for d in same(a[k], b[k], f"{path}.{k}")]
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} items != {len(b)}"]
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in same(x, y, f"{path}[{i}]")]
    return [] if a == b else [f"{path}: {a!r} != {b!r}"]


def findings(report: Any) -> dict[str, Any]:
    """What must not depend on where the data lives: the movement, the verdict and its causes, the
    segment table and the hypotheses' outcomes."""
    d = report.model_dump(mode="json")
    return {
        k: d[k] for k in ("movement", "conclusion", "confidence", "root_causes", "segments", "status")
    } | {"hypotheses": [(h["id"], h["status"]) for h in d["hypotheses"]]}
