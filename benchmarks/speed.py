"""Speed and memory of `investigate`, measured in one run as ratios (the machine's load cancels out).

    python benchmarks/speed.py [--pairs 5] [--rows 10000000] [--skip-large] [--ratios-only]

1. CLI on a small table vs `investigate --help`: the two commands alternate, each pair gives a ratio,
   the median is reported. Measured as a person at a terminal runs it (through the warm helper,
   `investigator.warm`, its worker ready: an analyst's runs are seconds apart, its warm-up takes a
   few; target <= 1) and as a script or nightly job runs it (`INVESTIGATOR_WARM=0`: cold; target
   <= 2); and a question the data's columns refuse (an unknown dimension; target <= 1.5: it must
   not wait for a kernel). `--ratios-only` measures these three and stops.
2. The notebook API: a second `investigate()` in the same process vs the first (target <= 0.30).
3. Where the time goes (report `stats.phases`: start, data, loop, artifacts) on the small table and
   on a large one (default 10M rows), and the large run end to end vs DuckDB's own time for what the
   run needs of the file: the daily totals and the current/baseline cube (target <= 3).
4. Peak memory of the host process and of the sandbox (server and kernel, the largest child).

The small table is the first data file under ../shared/scenarios, or a generated one
(`investigator.sources.synth`) when that folder is absent. Prints a table (the phases of the cold
and the warm run among it), then one JSON line.

Where a cold question's time goes (2 shared cores, the demo's broad_decline table, 4 alternated
pairs against the tree before, Nov 2026): start 4.9 s (the command's imports, ~1.9 s of them
pandas, Ibis and the CLI before the columns are checked and the server spawned; then the host's
MCP SDK, 1.3 s, while the server imports its own and the kernel imports the analysis library),
data 0.6, loop 1.0, artifacts 0.6-0.8: about 7.8 s. The three processes (command, server,
kernel) start at once on two cores, so the start is bound by their CPU: the MCP SDK and pandas
and Ibis are each imported twice. Warm (the helper's worker ready): start 0.4-0.5, data 0.3,
loop 1.0 (the kernel's own queries: quality checks 0.33 s, the segments 0.2 s; the MCP round
trips ~0.03 s a call), artifacts 0.5.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
SCENARIOS = ROOT.parent / "shared" / "scenarios"
CLI = [str(Path(sys.executable).parent / "investigate")]
TARGETS = {
    "cli_vs_help": 1.0,
    "cold_vs_help": 2.0,
    "refusal_vs_help": 1.5,
    "second_vs_first": 0.30,
    "large_vs_duckdb": 3.0,
}

# one investigation in a fresh process: its wall time, its stats, and peak memory
ONE = """
import json, resource, sys, time
started = time.monotonic()
from investigator.config import load_settings
from investigator.runner import investigate
from investigator.request import Request
report = investigate(Request(metric="revenue", data=sys.argv[1]), load_settings(runs_dir=sys.argv[2]))
print(json.dumps({
    "wall_s": time.monotonic() - started,
    "stats": report.stats.model_dump(),
    "host_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "sandbox_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "found": report.root_causes[0].segment if report.root_causes else None,
}))
"""

# the notebook API twice in one process, on the same file
TWICE = """
import json, sys, time
from investigator import investigate
walls, phases = [], []
for _ in range(int(sys.argv[3])):
    started = time.monotonic()
    inv = investigate(sys.argv[1], "revenue", runs_dir=sys.argv[2], quiet=True)
    walls.append(time.monotonic() - started)
    phases.append(inv.stats.phases.model_dump())
print(json.dumps({"walls": walls, "phases": phases}))
"""

# DuckDB alone: the daily totals and the current/baseline cube of the last 7 days vs the 7 before
DUCKDB = """
import json, statistics, sys, time
import duckdb
path = sys.argv[1]
con = duckdb.connect()
cols = con.sql(f"describe select * from read_parquet('{path}')").fetchall()
dims = [c[0] for c in cols if c[0] != "date" and ("VARCHAR" in c[1] or "ENUM" in c[1])]
nums = [c[0] for c in cols if c[0] != "date" and c[0] not in dims]
sums = ", ".join(f"sum({c}) as {c}" for c in nums)
daily = f"select date, {sums}, count(*) as n from read_parquet('{path}') group by date"
cube = (
    f"with t as (select * from read_parquet('{path}')), m as (select max(date) as d from t) "
    f"select {', '.join(dims)}, date > d - 7 as current, {sums} from t, m "
    f"where date > d - 14 group by all"
)
times = []
for _ in range(3):
    started = time.monotonic()
    con.sql(daily).fetchall()
    con.sql(cube).fetchall()
    times.append(time.monotonic() - started)
print(json.dumps({"duckdb_s": statistics.median(times)}))
"""

GENERATE = """
import sys
from investigator.sources.synth import generate
rows, path = int(sys.argv[1]), sys.argv[2]
if rows <= 100_000:
    frame, _ = generate("segment_change", seed=1, segment={"channel": "social"}, factor=0.5)
else:
    leaves = rows // 120
    store = -(-leaves // 12000)
    sizes = {"country": 20, "platform": 3, "channel": 8, "category": round(leaves / 480 / store)}
    sizes["store"] = store
    dims = {k: [f"{k}_{i}" for i in range(n)] for k, n in sizes.items()}
    frame, _ = generate("segment_change", seed=1, dims=dims, segment={"channel": "channel_3"}, factor=0.5)
frame.to_parquet(path, index=False, row_group_size=1_000_000)
"""


def _json(args: list[str]) -> dict:
    out = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def small_table() -> Path:
    """A scenario's file when ../shared is there, else a generated table of the same shape."""
    found = sorted([*SCENARIOS.glob("*/*.parquet"), *SCENARIOS.glob("*/*.csv")]) if SCENARIOS.is_dir() else []
    if found:
        return found[0]
    return generated(86_400, "small")


def generated(rows: int, name: str) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"speed_{name}_{rows}.parquet"
    if not path.exists():
        subprocess.run([sys.executable, "-c", GENERATE, str(rows), str(path)], check=True)
    return path


def large_table(rows: int) -> Path:
    """`benchmarks/scale.py`'s table of that size if it made one, else a generated one."""
    made = CACHE / f"events_{rows}.parquet"
    return made if made.exists() else generated(rows, "large")


def timed(args: list[str], env: dict[str, str] | None = None, code: int = 0) -> float:
    started = time.monotonic()
    done = subprocess.run(args, capture_output=True, env=env)
    if done.returncode != code:
        raise SystemExit(
            f"{' '.join(args)} exited {done.returncode}, not {code}: {done.stderr.decode()[-400:]}"
        )
    return time.monotonic() - started


def warm_env(where: Path | None) -> dict[str, str]:
    """Through the helper whose socket is in `where`, or (None) without one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("INVESTIGATOR_WARM")}
    if where is None:
        return {**env, "INVESTIGATOR_WARM": "0"}
    return {**env, "INVESTIGATOR_WARM": "1", "INVESTIGATOR_WARM_DIR": str(where)}


def worker_ready(where: Path, seconds: float = 180.0) -> None:
    """Wait until the helper's next worker has warmed up (what a person's next run finds)."""
    from investigator.warm.client import helpers

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = helpers({"INVESTIGATOR_WARM_DIR": str(where)})
        if found and found[0][1].get("ready"):
            return
        time.sleep(0.2)
    raise SystemExit(f"the warm helper in {where} had no worker ready after {seconds:.0f}s")


def stop_helpers(where: Path) -> None:
    from investigator.warm.client import ask, helpers

    for path, _ in helpers({"INVESTIGATOR_WARM_DIR": str(where)}):
        ask(path, "stop")


def cli_vs_help(path: Path, runs: Path, pairs: int, warm: Path | None = None) -> dict:
    """Alternate `--help` and a whole run, so both see the same load; the median of the ratios.
    With `warm`, runs go through the helper there, each once its worker is ready."""
    ratios, helps, alls = [], [], []
    env = warm_env(warm)
    run = [*CLI, "--metric", "revenue", "--data", str(path), "--runs-dir", str(runs), "--quiet"]
    timed([*CLI, "--help"], env)  # the first import of anything fills the OS file cache
    if warm is not None:
        timed(run, env)  # no helper answers yet: this run starts one
    for i in range(pairs):
        if warm is not None:
            worker_ready(warm)
        if i % 2:
            whole, help_ = timed(run, env), timed([*CLI, "--help"], env)
        else:
            help_, whole = timed([*CLI, "--help"], env), timed(run, env)
        ratios.append(whole / help_)
        helps.append(help_)
        alls.append(whole)
    reports = sorted(runs.glob("*/report.json"), key=lambda p: p.stat().st_mtime)
    stats = json.loads(reports[-1].read_text())["stats"]
    return {
        "ratio": round(statistics.median(ratios), 2),
        "help_s": round(statistics.median(helps), 2),
        "run_s": round(statistics.median(alls), 2),
        "phases": stats["phases"],
        "stats_total_s": stats["elapsed_s"],
    }


def refusal_vs_help(path: Path, runs: Path, pairs: int) -> dict:
    """A question the data's columns refuse (exit 2) against `--help`, alternated; the median."""
    env = warm_env(None)
    refused = [
        *CLI,
        "--metric",
        "revenue",
        "--data",
        str(path),
        "--dimensions",
        "planet",
        "--runs-dir",
        str(runs),
    ]
    ratios, helps, alls = [], [], []
    for i in range(pairs):
        if i % 2:
            whole, help_ = timed(refused, env, code=2), timed([*CLI, "--help"], env)
        else:
            help_, whole = timed([*CLI, "--help"], env), timed(refused, env, code=2)
        ratios.append(whole / help_)
        helps.append(help_)
        alls.append(whole)
    return {
        "ratio": round(statistics.median(ratios), 2),
        "help_s": round(statistics.median(helps), 2),
        "run_s": round(statistics.median(alls), 2),
    }


def second_vs_first(path: Path, runs: Path, calls: int = 3) -> dict:
    r = _json([sys.executable, "-c", TWICE, str(path), str(runs), str(calls)])
    walls = r["walls"]
    later = statistics.median(walls[1:])
    return {
        "ratio": round(later / walls[0], 2),
        "first_s": round(walls[0], 2),
        "later_s": round(later, 2),
        "phases": r["phases"],
    }


def large(path: Path, runs: Path) -> dict:
    r = _json([sys.executable, "-c", ONE, str(path), str(runs)])
    duck = _json([sys.executable, "-c", DUCKDB, str(path)])["duckdb_s"]
    import pyarrow.parquet as pq

    r["rows"] = pq.ParquetFile(path).metadata.num_rows
    r["duckdb_s"] = round(duck, 2)
    r["ratio"] = round(r["wall_s"] / duck, 2)
    return r


def large_cli(path: Path, runs: Path, warm: Path, duckdb_s: float, times: int = 3) -> dict:
    """The large table through `investigate` as a person at a terminal runs it (warm helper, its
    worker ready): the median wall time of `times` runs, against DuckDB's time measured in `large`."""
    env = warm_env(warm)
    run = [*CLI, "--metric", "revenue", "--data", str(path), "--runs-dir", str(runs), "--quiet"]
    walls = []
    for _ in range(times):
        worker_ready(warm)
        walls.append(timed(run, env))
    reports = sorted(runs.glob("*/report.json"), key=lambda p: p.stat().st_mtime)
    stats = json.loads(reports[-1].read_text())["stats"]
    wall = statistics.median(walls)
    return {"wall_s": round(wall, 2), "ratio": round(wall / duckdb_s, 2), "phases": stats["phases"]}


def ok(value: float, key: str) -> str:
    return "ok" if value <= TARGETS[key] else "MISSED"


def _ratios(small: Path, pairs: int, cold: dict, cli: dict, refusal: dict) -> None:
    """The three ratios a person waits on, against `--help` in the same run."""
    print(f"small table: {small}")
    rows = [
        ("cold question / --help", cold, "cold_vs_help", "INVESTIGATOR_WARM=0"),
        ("warm question / --help", cli, "cli_vs_help", "warm helper, its worker ready"),
        ("schema refusal / --help", refusal, "refusal_vs_help", "an unknown dimension, exit 2"),
    ]
    for words, found, key, how in rows:
        print(
            f"{words:<24} {found['ratio']:>5.2f}x  (target <= {TARGETS[key]}) {ok(found['ratio'], key):<6}"
            f"  median {found['run_s']:.2f}s vs {found['help_s']:.2f}s over {pairs} pairs, {how}"
        )
    for words, found in (("cold", cold), ("warm", cli)):
        print(f"phases, small, {words} CLI (s): {_phases(found['phases'])}  = {found['stats_total_s']:.2f}")
    floor = cold_floor(cold, cli)
    print(
        f"cold floor / --help     {floor:>5.2f}x  a cold question whose sandbox started in no time at all: "
        "--help's own imports, then the run's work (the warm run's data, loop and artifacts)"
    )


def cold_floor(cold: dict, cli: dict) -> float:
    """The least a cold question can take against `--help` while it starts a kernel of its own:
    the command's imports (about `--help`) plus the run's work once a kernel answers (the warm
    run's phases after its start), with the sandbox's start taken as free. A target below it asks
    for a question that starts no kernel."""
    work = sum(v for k, v in cli["phases"].items() if k != "start_s")
    return round((cold["help_s"] + work) / cold["help_s"], 2)


def _phases(p: dict) -> str:
    return " ".join(f"{k[:-2]} {v:.2f}" for k, v in p.items())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=5, help="paired CLI/--help runs (median)")
    ap.add_argument("--rows", type=int, default=10_000_000, help="rows of the large table")
    ap.add_argument("--skip-large", action="store_true")
    ap.add_argument("--ratios-only", action="store_true", help="cold, warm and refusal vs --help only")
    args = ap.parse_args()
    runs = Path(tempfile.mkdtemp(prefix="investigator-speed-"))
    sockets = Path(tempfile.mkdtemp(prefix="investigator-speed-warm-"))
    try:
        small = small_table()
        cold = cli_vs_help(small, runs / "cold", args.pairs)
        cli = cli_vs_help(small, runs / "cli", args.pairs, warm=sockets)
        refusal = refusal_vs_help(small, runs / "refused", args.pairs)
        if args.ratios_only:
            stop_helpers(sockets)
            _ratios(small, args.pairs, cold, cli, refusal)
            print(json.dumps({"targets": TARGETS, "small_table": str(small), "cli": cli, "cli_cold": cold,
                              "refusal": refusal, "cold_floor": cold_floor(cold, cli)}))  # fmt: skip
            return 0
        big = big_cli = None
        if not args.skip_large:
            big = large(large_table(args.rows), runs / "large")
            big_cli = large_cli(large_table(args.rows), runs / "large-cli", sockets, big["duckdb_s"])
        stop_helpers(sockets)
        api = second_vs_first(small, runs / "api")
    finally:
        stop_helpers(sockets)
        shutil.rmtree(runs, ignore_errors=True)
        shutil.rmtree(sockets, ignore_errors=True)
    _ratios(small, args.pairs, cold, cli, refusal)
    print(
        f"2nd investigate() / 1st {api['ratio']:>5.2f}x  (target <= {TARGETS['second_vs_first']}) "
        f"{ok(api['ratio'], 'second_vs_first')}   {api['later_s']:.2f}s vs {api['first_s']:.2f}s"
    )
    print(f"phases, small, 1st API:  {_phases(api['phases'][0])}")
    print(f"phases, small, 2nd API:  {_phases(api['phases'][1])}")
    if big is not None and big_cli is not None:
        duck, target = big["duckdb_s"], TARGETS["large_vs_duckdb"]
        print(
            f"{big['rows']:,} rows / DuckDB {big_cli['ratio']:>5.2f}x  (target <= {target}) "
            f"{ok(big_cli['ratio'], 'large_vs_duckdb')}   {big_cli['wall_s']:.2f}s vs {duck:.2f}s, "
            "CLI from a terminal (warm helper)"
        )
        print(
            f"  cold (API, new process) {big['ratio']:>4.2f}x"
            f"                 {big['wall_s']:.2f}s vs {duck:.2f}s (imports and kernel start included)"
        )
        print(f"phases, {big['rows']:,} rows, CLI:  {_phases(big_cli['phases'])}")
        print(f"phases, {big['rows']:,} rows, cold: {_phases(big['stats']['phases'])}")
        print(
            f"peak memory, {big['rows']:,} rows: host {big['host_peak_mb']:.0f} MB, "
            f"sandbox (largest child) {big['sandbox_peak_mb']:.0f} MB"
        )
    found = {"cli": cli, "cli_cold": cold, "cold_floor": cold_floor(cold, cli), "refusal": refusal}
    found |= {"api": api, "large_cli": big_cli, "large": big}
    print(json.dumps({"targets": TARGETS, "small_table": str(small), **found}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
