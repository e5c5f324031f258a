"""Data where it lives, at scale: `investigate` end to end against engines, only aggregates moving.

    python benchmarks/scale.py                      # DuckDB and Spark 1M and 10M rows, Postgres, SQLite 1M
    python benchmarks/scale.py --sizes 1000000 --skip-postgres --skip-spark --queries
    python benchmarks/scale.py --with-100m          # adds DuckDB at 100M rows (minutes, ~3 GB disk)
    python benchmarks/scale.py --distinct-sizes 10000000 --sizes "" --sqlite-sizes "" \
        --skip-postgres --skip-spark                # count_distinct(user_id) at 10M rows only

Event-level rows (one per order: 90 days, 5 dimensions of 8 x 3 x 5 x 6 x 4 values, a planted drop
in one channel over the last week) go into a DuckDB database file, a PostgreSQL cluster started
for the run and a Parquet file Spark reads in local mode. Each run is a fresh process running the
offline planner with a local kernel. Reported per run, all measured in the same process and so
under the same load:
- run s: end to end;
- engine s: the engine's own time for the queries the run needs: every query the source sent
  (`sources.querylog`), sent again after the run straight to the engine's driver (psycopg, DuckDB,
  SQLite, the run's Spark session) and its answer fetched, with no Ibis or pandas in between;
- fixed s: a file run on the extract the run wrote: all of the run's work but the engine's
  (start-up, kernel, analysis, report), what a run on any engine should add to the engine's time;
- rest s: run - engine - fixed, the waste left (negative: the kernel started while the engine
  worked, or the noise of a shared machine); connect s: reaching the engine (Spark: its JVM);
- peak RSS of the run's own host process (VmHWM, which, unlike ru_maxrss, does not inherit the
  benchmark parent's peak across fork and exec; Postgres or Spark's JVM is not the host's; DuckDB
  runs inside it), peak RSS of the sandbox processes (MCP server and kernel), bytes the engine sent
  (the extract's Arrow buffers), the extract's rows and the cause found.
Host and kernel memory should stay flat as rows grow: both only ever see aggregates.
`--distinct-sizes` adds DuckDB runs of `count_distinct(user_id)` (users drawn from 1M, so a week
holds about as many distinct users as rows a day): every window counted whole by the engine (the
window, the baseline, each leaf and dimension value, and the window ending at every day for the
history), with `run / engine`, the run's time over the engine's own time for those aggregates. `--queries`
prints each query's seconds as sent and as the engine alone took. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
DIMS = {
    "country": ["DE", "FR", "US", "GB", "ES", "IT", "NL", "PL"],
    "platform": ["ios", "android", "web"],
    "channel": ["search", "social", "email", "direct", "affiliate"],
    "category": ["books", "games", "garden", "home", "music", "toys"],
    "device": ["phone", "tablet", "desktop", "tv"],
}
DAYS = 90

RUNNER = """
import json, logging, resource, shutil, sys, threading, time
import psutil
import investigator.runner as runner
import investigator.runs as run_files
from investigator.config import load_settings
from investigator.request import build_request

def own_peak_kb():
    # this process's own peak RSS: VmHWM belongs to the address space exec made. ru_maxrss does
    # not: Linux carries the forking parent's high-water mark over into it (fork copies the mm's
    # high-water mark, exec folds it into the process's maxrss), so after the benchmark parent had
    # built a 100M-row table every run reported the parent's 939 MB
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # not Linux: the best there is

data, table, runs, keep = sys.argv[1], sys.argv[2] or None, sys.argv[3], sys.argv[4]
metric = sys.argv[5] if len(sys.argv) > 5 else "revenue"
moved = []
write = run_files.write_extract
def counted(*a, **k):
    extract = write(*a, **k)
    moved.append((extract.bytes_moved, extract.rows))
    shutil.copyfile(extract.path, keep)  # for the file run that measures the fixed cost
    return extract
run_files.write_extract = counted
queries = []
class Collect(logging.Handler):
    def emit(self, record):
        queries.append(record.query)
log = logging.getLogger("investigator.sources.queries")
log.addHandler(Collect())
log.setLevel(logging.DEBUG)
peak = {"sandbox": 0}
me = psutil.Process()
def sample():
    while True:
        for p in me.children(recursive=True):
            try:
                if "java" not in p.name():
                    peak["sandbox"] = max(peak["sandbox"], p.memory_info().rss)
            except psutil.Error:
                pass
        time.sleep(0.1)
threading.Thread(target=sample, daemon=True).start()
started = time.monotonic()
request = build_request(metric, data, "7d", None, "previous", None, None, None, table=table)
report = runner.investigate(request, load_settings(runs_dir=runs, sandbox="local"))
elapsed = time.monotonic() - started
log.handlers.clear()
sent = [q for q in queries if q.sql]
connect = sum(q.seconds for q in queries if not q.sql)

def direct():
    # the engine's own time: each query the run sent, sent again straight to the engine's driver
    # and its answer fetched, with no Ibis and no pandas in between
    kind = data.split(":", 1)[0]
    if kind == "spark":
        from pyspark.sql import SparkSession
        spark = SparkSession.getActiveSession()  # the run's session: its views are still there
        return lambda sql: spark.sql(sql).collect()
    if kind.startswith("postgres"):
        import psycopg
        con = psycopg.connect(data, autocommit=True)
        def pg(sql):
            with con.cursor() as cur:
                cur.execute(sql)
                return cur.fetchall()
        return pg
    if kind == "duckdb":
        import duckdb
        con = duckdb.connect("/" + data.split("://", 1)[1].lstrip("/"), read_only=True)
        return lambda sql: con.execute(sql).fetchall()
    if kind == "sqlite":
        import sqlite3
        con = sqlite3.connect("/" + data.split("://", 1)[1].lstrip("/"))
        return lambda sql: con.execute(sql).fetchall()
    return None

engine = []
run_sql = direct()
for q in sent if run_sql else []:
    t = time.perf_counter()
    run_sql(q.sql)
    engine.append(round(time.perf_counter() - t, 3))
print(json.dumps({
    "elapsed_s": round(elapsed, 2),
    "engine_s": round(sum(engine), 2) if run_sql else None,
    "sent_s": round(sum(q.seconds for q in sent), 2),
    "connect_s": round(connect, 2),
    "queries": [[q.what, round(q.seconds, 3), e, q.rows] for q, e in zip(sent, engine or [None] * len(sent))],
    "sql": [q.sql for q in sent],
    "host_peak_mb": round(own_peak_kb() / 1024),
    "kernel_peak_mb": round(peak["sandbox"] / 2**20),
    "bytes_moved": moved[0][0] if moved else None,
    "extract_rows": moved[0][1] if moved else None,
    "found": report.root_causes[0].segment if report.root_causes else None,
}))
"""


# Spark's own time as a run meets it: a fresh process starts the JVM and a session configured as the
# run's, reads the Parquet file under the view names the run's queries use, and sends each query
# cold, with no Ibis and no pandas. The warm re-send (engine s) leaves out the JVM's start and the
# first-time planning and code generation every new Spark session pays.
SPARK_COLD = """
import json, re, sys, time
from investigator.sources.warehouse import connect  # the imports are in the fixed cost already
started = time.monotonic()
session = connect("spark://local[2]")._session
path, sqls = sys.argv[1], json.loads(sys.argv[2])
for name in sorted({v for sql in sqls for v in re.findall(r"ibis_read_parquet_\\w+", sql)}):
    session.read.parquet(path).createOrReplaceTempView(name)
for sql in sqls:
    session.sql(sql).collect()
print(json.dumps({"cold_s": round(time.monotonic() - started, 2)}))
"""


def spark_cold(path: str, sqls: list[str]) -> float | None:
    out = subprocess.run(
        [sys.executable, "-c", SPARK_COLD, path, json.dumps(sqls)],
        capture_output=True, text=True, cwd=ROOT, timeout=3600,
    )  # fmt: skip
    if out.returncode != 0:
        return None
    return float(json.loads(out.stdout.strip().splitlines()[-1])["cold_s"])


def parquet(rows: int) -> Path:
    """Event rows, written in chunks so generating 100M rows needs no more memory than 1M."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"events_{rows}.parquet"
    if path.exists():
        return path
    rng = np.random.default_rng(7)
    start = np.datetime64("2026-01-01")
    partial = path.with_suffix(".partial")
    writer = None
    for first in range(0, rows, 2_000_000):
        n = min(2_000_000, rows - first)
        day = rng.integers(0, DAYS, n)
        cols: dict[str, pa.Array] = {"date": pa.array(start + day.astype("timedelta64[D]"))}
        codes = {k: rng.integers(0, len(v), n) for k, v in DIMS.items()}
        for k, values in DIMS.items():
            cols[k] = pa.DictionaryArray.from_arrays(pa.array(codes[k], pa.int32()), pa.array(values))
        revenue = rng.gamma(2.0, 20.0, n)
        planted = (codes["channel"] == 1) & (day >= DAYS - 7)  # social, the last week
        revenue[planted] *= 0.5
        cols["revenue"] = pa.array(np.round(revenue, 2))
        cols["orders"] = pa.array(np.ones(n, dtype="int64"))
        batch = pa.table(cols)
        writer = writer or pq.ParquetWriter(partial, batch.schema)
        writer.write_table(batch, row_group_size=1_000_000)
    assert writer is not None
    writer.close()
    partial.replace(path)
    return path


USERS = 1_000_000  # user ids of the distinct-count runs


def duckdb_file(rows: int, users: bool = False) -> Path:
    """The events in a DuckDB file; with `users`, each row gets a user_id (hash of the row number,
    out of `USERS`), for the distinct-count runs."""
    import duckdb

    source = parquet(rows)
    path = CACHE / (f"events_users_{rows}.ddb" if users else f"events_{rows}.ddb")
    if not path.exists():
        path.with_suffix(".partial").unlink(missing_ok=True)
        con = duckdb.connect(str(path.with_suffix(".partial")))
        user = f", 'u' || (hash(row_number() OVER ()) % {USERS}) AS user_id" if users else ""
        con.execute(f"CREATE TABLE events AS SELECT *{user} FROM read_parquet('{source}')")
        con.close()
        path.with_suffix(".partial").replace(path)
    return path


def sqlite_file(rows: int) -> Path:
    """The events in a SQLite file (dates as ISO text, as SQLite keeps them), an index on the date."""
    import sqlite3

    import pyarrow.parquet as pq

    path = CACHE / f"events_{rows}.sqlite"
    if not path.exists():
        partial = path.with_suffix(".partial")
        partial.unlink(missing_ok=True)
        con = sqlite3.connect(partial)
        cols = ", ".join(f"{d} TEXT" for d in DIMS)
        con.execute(f"CREATE TABLE events (date DATE, {cols}, revenue REAL, orders INTEGER)")
        for batch in pq.ParquetFile(parquet(rows)).iter_batches(200_000):
            values = [c.to_pylist() for c in batch.columns]
            values[0] = [d.isoformat() for d in values[0]]
            marks = ",".join("?" * len(values))
            con.executemany(f"INSERT INTO events VALUES ({marks})", zip(*values, strict=True))
        con.execute("CREATE INDEX events_date ON events(date)")
        con.commit()
        con.close()
        partial.replace(path)
    return path


@contextlib.contextmanager
def postgres(rows: int) -> Iterator[str]:
    """A throwaway cluster holding the events table; its URL (stopped and removed afterwards)."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    bindir = Path(shutil.which("initdb") or (found[-1] if found else "")).parent
    if not (bindir / "pg_ctl").exists():
        raise RuntimeError("PostgreSQL binaries not found")
    root = Path(tempfile.mkdtemp(prefix="bench-pg-"))
    as_user = []
    if os.geteuid() == 0:
        entry = pwd.getpwnam("postgres")
        os.chown(root, entry.pw_uid, entry.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    with socket.socket() as s:  # a free port: other benchmarks may hold a cluster of their own
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    def run(*cmd: str) -> None:
        subprocess.run([*as_user, *cmd], check=True, capture_output=True, timeout=300)

    run(str(bindir / "initdb"), "-D", str(root / "data"), "-U", "bench", "--auth=trust")
    opts = f"-p {port} -k {root} -c listen_addresses=127.0.0.1 -c fsync=off"
    run(str(bindir / "pg_ctl"), "-D", str(root / "data"), "-o", opts, "-l", str(root / "log"), "-w", "start")
    try:
        import psycopg
        import pyarrow.parquet as pq

        with psycopg.connect(host="127.0.0.1", port=port, user="bench", dbname="postgres") as conn:
            cols = ", ".join(f"{d} text" for d in DIMS)
            conn.execute(f"CREATE TABLE events (date date, {cols}, revenue double precision, orders bigint)")
            with conn.cursor().copy("COPY events FROM STDIN") as copy:
                for batch in pq.ParquetFile(parquet(rows)).iter_batches(200_000):
                    for row in zip(*(c.to_pylist() for c in batch.columns), strict=True):
                        copy.write_row(row)
        yield f"postgres://bench@127.0.0.1:{port}/postgres"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(root / "data"), "-m", "fast", "-w", "stop")
        shutil.rmtree(root, ignore_errors=True)


def end_to_end(data: str, table: str, rows: int, metric: str = "revenue") -> dict:
    """One run on `data` in a fresh process, then a file run on the extract it wrote: that one
    does all the run's work but the engine's (start-up, kernel, analysis, report), so it is the
    fixed cost a run on any engine adds to the engine's own time."""
    runs = Path(tempfile.mkdtemp(prefix="bench-runs-"))
    keep = runs.parent / f"{runs.name}-extract.parquet"
    try:
        got = _process(data, table, runs, keep, metric)
        if "error" not in got and keep.exists() and metric == "revenue":  # a distinct count's
            # extract holds its counts, not the column: it cannot be investigated as a file
            fixed = _process(str(keep), "", runs / "fixed", runs / "unused.parquet", metric)
            got["fixed_s"] = fixed.get("elapsed_s")
        if "error" not in got and data.startswith("spark://"):
            got["engine_cold_s"] = spark_cold(table, got.get("sql", []))
    finally:
        shutil.rmtree(runs, ignore_errors=True)
        keep.unlink(missing_ok=True)
    return {"rows": rows, **got}


def _process(data: str, table: str, runs: Path, keep: Path, metric: str = "revenue") -> dict:
    out = subprocess.run(
        [sys.executable, "-c", RUNNER, data, table, str(runs), str(keep), metric],
        capture_output=True, text=True, cwd=ROOT, timeout=3600,
    )  # fmt: skip
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000000,10000000", help="DuckDB sizes (rows)")
    ap.add_argument("--postgres-sizes", default="1000000", help="PostgreSQL sizes (rows)")
    ap.add_argument("--spark-sizes", default="1000000,10000000", help="Spark local[2] sizes (rows)")
    ap.add_argument("--with-100m", action="store_true", help="add DuckDB at 100M rows")
    ap.add_argument("--sqlite-sizes", default="1000000", help="SQLite file sizes (rows)")
    ap.add_argument("--distinct-sizes", default="10000000", help="DuckDB count_distinct(user_id) sizes")
    ap.add_argument("--skip-postgres", action="store_true")
    ap.add_argument("--skip-spark", action="store_true")
    ap.add_argument("--queries", action="store_true", help="print every query each run sent")
    args = ap.parse_args()
    sizes = _sizes(args.sizes) + ([100_000_000] if args.with_100m else [])
    results = []
    for n in sizes:
        results.append({"engine": "duckdb", **end_to_end(f"duckdb:///{duckdb_file(n)}", "events", n)})
    for n in _sizes(args.distinct_sizes):
        url = f"duckdb:///{duckdb_file(n, users=True)}"
        got = end_to_end(url, "events", n, "count_distinct(user_id)")
        results.append({"engine": "duckdb distinct", **got})
    for n in _sizes(args.sqlite_sizes):
        results.append({"engine": "sqlite", **end_to_end(f"sqlite:///{sqlite_file(n)}", "events", n)})
    for n in [] if args.skip_postgres else _sizes(args.postgres_sizes):
        try:
            with postgres(n) as url:
                results.append({"engine": "postgres", **end_to_end(url, "events", n)})
        except Exception as e:
            results.append({"engine": "postgres", "rows": n, "error": str(e)})
    for n in [] if args.skip_spark else _sizes(args.spark_sizes):
        results.append({"engine": "spark local[2]", **end_to_end("spark://local[2]", str(parquet(n)), n)})
    print(f"{'engine':<15} {'rows':>11} {'run s':>6} {'engine s':>8} {'fixed s':>7} {'rest s':>6} "
          f"{'connect s':>9} {'queries':>7} {'host MB':>7} {'kernel MB':>9} {'bytes moved':>11} "
          f"{'extract':>7}  found")  # fmt: skip
    for r in results:
        if "error" in r:
            print(f"{r['engine']:<15} {r['rows']:>11,}  error: {r['error']}")
            continue
        engine, fixed = r.get("engine_s"), r.get("fixed_s")
        rest = r["elapsed_s"] - engine - fixed if engine is not None and fixed is not None else None
        print(
            f"{r['engine']:<15} {r['rows']:>11,} {r['elapsed_s']:>6.1f} {_s(engine):>8} {_s(fixed):>7} "
            f"{_s(rest):>6} {_s(r['connect_s']):>9} {len(r['queries']):>7} {r['host_peak_mb']:>7} "
            f"{r['kernel_peak_mb']:>9} {r['bytes_moved']:>11,} {r['extract_rows']:>7,}  {r['found']}"
        )
        if engine:
            print(f"{'':<15} {'':>11} run / engine {r['elapsed_s'] / engine:.2f}")
        cold = r.get("engine_cold_s")
        if cold is not None and fixed is not None:
            print(f"{'':<15} {'':>11} engine cold {cold:.1f} s (a fresh Spark process: JVM, session, "
                  f"cold queries): rest against it {r['elapsed_s'] - cold - fixed:.1f} s")  # fmt: skip
        if args.queries:
            for what, sent, own, rows in r["queries"]:
                print(f"{'':<15} {what:<34} sent {sent:>7.3f}s  engine {_s(own, 3):>7}s  {rows:>9,} rows")
    print(json.dumps({"scale": results}))
    return 0


def _sizes(text: str) -> list[int]:
    return [int(s) for s in text.split(",") if s]


def _s(seconds: float | None, places: int = 1) -> str:
    return "-" if seconds is None else f"{seconds:.{places}f}"


if __name__ == "__main__":
    raise SystemExit(main())
