"""Speed and memory, measured in one run: localization vs a reference, and `investigate` end to end.

    python benchmarks/speed.py [--sizes 1000000,10000000] [--skip-localize]

End to end = a fresh process running a whole offline investigation on a generated Parquet table of
N rows (kernel start, data load, every analysis, report). Peak RSS is reported for the host process
(the agent) and for the kernel process separately: the host should stay flat as rows grow, because
aggregation happens in DuckDB. Targets: 1M rows < 5 s, 10M rows < 15 s, peak RSS < 2 GB.
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / "benchmarks" / ".cache"
TARGETS = {1_000_000: 5.0, 10_000_000: 15.0}

RUNNER = """
import json, resource, sys, time
from pathlib import Path
from investigator.config import load_settings
from investigator.runner import investigate
from investigator.sources.request import Request
path, runs = sys.argv[1], sys.argv[2]
started = time.monotonic()
report = investigate(Request(metric="revenue", data=path), load_settings(runs_dir=runs))
elapsed = time.monotonic() - started
print(json.dumps({
    "elapsed_s": elapsed,
    "host_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "kernel_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    "found": report.root_causes[0].segment if report.root_causes else None,
}))
"""

GENERATE = """
import sys
from investigator.sources.synth import generate
rows, path = int(sys.argv[1]), sys.argv[2]
days = 120
leaves = rows // days
# dimension sizes whose product is about the leaves needed
store = -(-leaves // 12000)
sizes = {"country": 20, "platform": 3, "channel": 8, "category": round(leaves / 480 / store), "store": store}
dims = {k: [f"{k}_{i}" for i in range(n)] for k, n in sizes.items()}
frame, truth = generate("segment_change", seed=1, dims=dims, segment={"channel": "channel_3"}, factor=0.5)
frame.to_parquet(path, index=False, row_group_size=1_000_000)
print(len(frame))
"""


def data_file(rows: int) -> Path:
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / f"sales_{rows}.parquet"
    if not path.exists():
        subprocess.run([sys.executable, "-c", GENERATE, str(rows), str(path)], check=True)
    return path


def end_to_end(rows: int) -> dict:
    path = data_file(rows)
    runs = CACHE / "runs"
    out = subprocess.run(
        [sys.executable, "-c", RUNNER, str(path), str(runs)], capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    import pyarrow.parquet as pq

    result["rows"] = pq.ParquetFile(path).metadata.num_rows
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--skip-localize", action="store_true")
    args = ap.parse_args()
    record: dict = {}
    if not args.skip_localize:
        print("== localization vs brute-force reference (benchmarks/localize_speed.py)")
        out = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "localize_speed.py")], capture_output=True, text=True
        )
        print(out.stdout.strip())
        last = [line for line in out.stdout.splitlines() if line.startswith("{")]
        record["localize"] = json.loads(last[-1]) if last else None
    print("\n== investigate end to end (offline planner, local kernel, DuckDB)")
    print(f"{'rows':>12} {'seconds':>8} {'target':>7} {'host MB':>8} {'kernel MB':>9}  found")
    rows_out = []
    for size in (int(s) for s in args.sizes.split(",")):
        started = time.monotonic()
        r = end_to_end(size)
        target = TARGETS.get(size)
        r["target_s"] = target
        rows_out.append(r)
        print(
            f"{r['rows']:>12,} {r['elapsed_s']:>8.2f} {target or '-':>7} {r['host_peak_mb']:>8.0f} "
            f"{r['kernel_peak_mb']:>9.0f}  {r['found']}   "
            f"(wall incl. process start {time.monotonic() - started:.1f}s)"
        )
    if len(rows_out) >= 2:
        a, b = rows_out[0], rows_out[-1]
        record["host_memory_growth"] = round(b["host_peak_mb"] / a["host_peak_mb"], 2)
        record["time_growth"] = round(b["elapsed_s"] / a["elapsed_s"], 2)
        print(
            f"rows x{b['rows'] / a['rows']:.0f}: time x{record['time_growth']}, "
            f"host memory x{record['host_memory_growth']}"
        )
    record["end_to_end"] = rows_out
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
