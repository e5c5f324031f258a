"""Triage speed, measured in one run: the scan of many metrics x segments, and investigations with
one and two workers.

    python benchmarks/triage.py [--rows 10000000] [--metrics 100] [--segments 20] [--skip-investigations]
                                [--skip-dimensions]

Scan = `scan_all` over a generated Parquet table (DuckDB through Ibis): one query per source
(date x segment), scored in pandas. 100 metrics (10 measures summed, 90 ratios of them) x 20 values
of `region` on 10M rows should take seconds. Scan dimensions = 3 metrics scanned by one dimension
(50 values), then by three (50 x 40 x 30 values), each in a fresh process (its time and peak
memory): three cost about the sum of their values, not their product (120 series, never 60,000
groups). Investigations = 5 offline investigations of a small planted table (each its own
kernel), run with 1 and then 2 workers. Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from datetime import date
from itertools import permutations
from pathlib import Path

MEASURES = 10


def make_table(path: Path, rows: int, segments: int) -> float:
    """`rows` rows over 365 days and `segments` regions, in DuckDB (no pandas copy); seconds taken."""
    import duckdb

    started = time.monotonic()
    measures = ", ".join(f"round(random() * {10 + i} * (1 + (i % 7 = 5)::int * 0.1), 2) AS m{i}"
                         for i in range(MEASURES))  # fmt: skip
    duckdb.sql(
        f"""COPY (SELECT DATE '2025-01-01' + (i % 365)::INT AS date,
                         'r' || lpad(((i * 7919) % {segments})::VARCHAR, 2, '0') AS region, {measures}
                  FROM range({rows}) t(i)) TO '{path}' (FORMAT parquet)"""
    )
    return time.monotonic() - started


DIMENSION_VALUES = {"a": 50, "b": 40, "c": 30}
SCAN_ONE = """
import json, resource, sys, time
from investigator.triage.config import TriageConfig
from investigator.triage.job import scan_all
from investigator.triage.secrets import Redactor
config = TriageConfig.model_validate({"data": sys.argv[1], "metrics": ["m0", "m1", "m0/m1"],
                                      "scan_segments": sys.argv[2].split(",")})
started = time.monotonic()
items = scan_all(config, Redactor())
elapsed = time.monotonic() - started
assert not [i.error for i in items if i.error], [i.error for i in items if i.error][:1]
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"s": round(elapsed, 2), "peak_mb": round(peak), "series": len(items)}))
"""


def make_dimensions_table(path: Path, rows: int) -> None:
    """`rows` rows over 365 days with three dimensions of 50, 40 and 30 values and two measures."""
    import duckdb

    primes = (7919, 104729, 1299709)
    dims = ", ".join(f"'{d}' || ((i * {p}) % {n})::VARCHAR AS {d}"
                     for (d, n), p in zip(DIMENSION_VALUES.items(), primes, strict=True))  # fmt: skip
    duckdb.sql(
        f"""COPY (SELECT DATE '2025-01-01' + (i % 365)::INT AS date, {dims},
                         round(random() * 10, 2) AS m0, round(random() * 20, 2) AS m1
                  FROM range({rows}) t(i)) TO '{path}' (FORMAT parquet)"""
    )


def bench_dimensions(path: Path, dims: list[str]) -> dict[str, float]:
    """The scan by `dims` in a fresh process: seconds, peak memory (MB) and series scanned."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", SCAN_ONE, str(path), ",".join(dims)],
                         capture_output=True, text=True, check=True)  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def metric_names(n: int) -> list[str]:
    columns = [f"m{i}" for i in range(MEASURES)]
    ratios = [f"{a}/{b}" for a, b in permutations(columns, 2)]
    return (columns + ratios)[:n]


def bench_scan(path: Path, metrics: int) -> tuple[float, int, int]:
    from investigator.triage.config import TriageConfig
    from investigator.triage.job import scan_all
    from investigator.triage.secrets import Redactor

    config = TriageConfig.model_validate(
        {"data": str(path), "metrics": metric_names(metrics), "scan_segments": ["region"]}
    )
    started = time.monotonic()
    items = scan_all(config, Redactor())
    elapsed = time.monotonic() - started
    errors = [i.error for i in items if i.error]
    if errors:
        raise SystemExit(f"scan failed: {errors[0]}")
    return elapsed, len(items), sum(i.flagged for i in items)


def bench_investigations(folder: Path, workers: int) -> tuple[float, int]:
    """Five offline investigations of one planted table, `workers` at a time; (seconds, concluded)."""
    from investigator.config import load_settings
    from investigator.runner import investigate
    from investigator.sources.synth import generate
    from investigator.triage.config import Target, TriageConfig
    from investigator.triage.runs import Job, investigate_all
    from investigator.triage.scan import ScanItem
    from investigator.triage.secrets import Redactor

    dims = {"country": ["US", "GB", "DE", "FR"], "channel": ["organic", "social", "email"]}
    data = folder / "planted.parquet"
    if not data.exists():
        frame, _ = generate("segment_change", seed=3, dims=dims, segment={"channel": "social"},
                            factor=0.4, days=70, scale=20)  # fmt: skip
        frame.to_parquet(data, index=False)
    metrics = ["revenue", "sessions", "orders", "orders/sessions", "revenue/orders"]
    config = TriageConfig.model_validate(
        {"data": str(data), "metrics": metrics, "dimensions": list(dims), "workers": workers}
    )
    jobs = [
        Job(item=ScanItem(metric=m, flagged=True, window_end=date(2026, 3, 29)),
            target=Target(metric=m, data=str(data), time_column="date", dimensions=list(dims),
                          scan_segments=[], direction="both"))
        for m in metrics
    ]  # fmt: skip
    settings = load_settings(runs_dir=folder / f"runs-{workers}", sandbox="local", home=folder / "home")
    started = time.monotonic()
    done, _ = investigate_all(jobs, config, settings, investigate, Redactor(), started, lambda *a, **k: None)
    return time.monotonic() - started, sum(d.status == "concluded" for d in done)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--metrics", type=int, default=100)
    parser.add_argument("--segments", type=int, default=20)
    parser.add_argument("--skip-investigations", action="store_true")
    parser.add_argument("--skip-dimensions", action="store_true")
    args = parser.parse_args()
    out: dict[str, object] = {"rows": args.rows, "metrics": args.metrics, "segments": args.segments}
    with tempfile.TemporaryDirectory(prefix="triage-bench-") as tmp:
        folder = Path(tmp)
        path = folder / "facts.parquet"
        out["generate_s"] = round(make_table(path, args.rows, args.segments), 2)
        scan_s, series, flagged = bench_scan(path, args.metrics)
        out.update(scan_s=round(scan_s, 2), series=series, flagged=flagged)
        if not args.skip_dimensions:
            wide = folder / "dimensions.parquet"
            make_dimensions_table(wide, args.rows)
            for label, dims in (("one_dimension", ["a"]), ("three_dimensions", ["a", "b", "c"])):
                result = bench_dimensions(wide, dims)
                out.update({f"{label}_s": result["s"], f"{label}_peak_mb": result["peak_mb"],
                            f"{label}_series": result["series"]})  # fmt: skip
        if not args.skip_investigations:
            for workers in (1, 2):
                wall, concluded = bench_investigations(folder, workers)
                out[f"investigations_{workers}_worker_s"] = round(wall, 2)
                out[f"concluded_{workers}_worker"] = concluded
    print(f"{'measure':<34}{'value':>12}")
    print(f"{'rows':<34}{args.rows:>12,}")
    print(f"{'generate Parquet (s)':<34}{out['generate_s']:>12}")
    print(f"{f'scan {args.metrics} metrics x {args.segments} segments (s)':<34}{out['scan_s']:>12}")
    print(f"{'series scanned / flagged':<34}{f'{series} / {flagged}':>12}")
    if "one_dimension_s" in out:
        for label, key in (("3 metrics x 1 dimension (50)", "one_dimension"),
                           ("3 metrics x 3 (50 x 40 x 30)", "three_dimensions")):  # fmt: skip
            print(f"{label:<34}{out[f'{key}_s']:>6} s {out[f'{key}_peak_mb']:>5} MB")
    for workers in (1, 2):
        if f"investigations_{workers}_worker_s" in out:
            label = f"5 investigations, {workers} worker{'s' if workers > 1 else ''} (s)"
            print(f"{label:<34}{out[f'investigations_{workers}_worker_s']:>12}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
