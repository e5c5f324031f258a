"""Run the planted-cause scenarios through the `investigate` CLI and score them.

    python benchmarks/scenarios.py [--dir ../shared/scenarios] [--planner offline] [--json OUT]

A scenario is found when every truth cause is among the report's first three root causes with the
same kind (and detail, for data quality) and exactly the same segment.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "scenarios"


def cause_found(truth: dict, causes: list[dict]) -> bool:
    for c in causes[:3]:
        if c["kind"] != truth["kind"] or c["segment"] != truth["segment"]:
            continue
        if truth.get("detail") and c.get("detail") != truth["detail"]:
            continue
        return True
    return False


def run_scenario(folder: Path, planner: str = "offline", extra: list[str] | None = None) -> dict:
    truth = json.loads((folder / "truth.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "report.json"
        cmd = [
            sys.executable, "-m", "investigator", "--data", str(folder / truth["data"]),
            "--metric", truth["metric"], "--window", truth["window"], "--end", truth["end"],
            "--time-column", truth["time_column"], "--dimensions", ",".join(truth["dimensions"]),
            "--planner", planner, "--runs-dir", str(Path(tmp) / "runs"), "--json", str(out), "--quiet",
            *(extra or []),
        ]  # fmt: skip
        started = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        elapsed = time.monotonic() - started
        if proc.returncode != 0:
            return {
                "scenario": folder.name,
                "found": False,
                "error": proc.stderr[-2000:],
                "elapsed_s": elapsed,
            }
        report = json.loads(out.read_text())
    causes = report["root_causes"]
    found = all(cause_found(t, causes) for t in truth["causes"])
    return {
        "scenario": folder.name,
        "found": found,
        "truth": truth["causes"],
        "reported": [
            {k: c.get(k) for k in ("kind", "segment", "detail", "contribution")} for c in causes[:3]
        ],
        "iterations": report["stats"]["iterations"],
        "elapsed_s": round(elapsed, 2),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", type=Path, default=SHARED)
    ap.add_argument("--planner", default="offline")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    if not args.dir.exists():
        print(f"no scenarios at {args.dir}", file=sys.stderr)
        return 2
    folders = sorted(p for p in args.dir.iterdir() if (p / "truth.json").exists())
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(lambda f: run_scenario(f, args.planner), folders))
    for r in results:
        mark = "found" if r["found"] else "MISSED"
        print(
            f"{r['scenario']:20s} {mark:7s} {r.get('iterations', '-'):>3} it {r['elapsed_s']:6.1f}s  "
            f"{r.get('reported', r.get('error', ''))}"
        )
    n = sum(r["found"] for r in results)
    print(f"{n}/{len(results)} scenarios found")
    print(json.dumps({"found": n, "total": len(results), "results": results}))
    if args.json:
        args.json.write_text(json.dumps({"found": n, "total": len(results), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
