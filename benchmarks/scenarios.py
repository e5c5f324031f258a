"""Run the planted-cause scenarios through the `investigate` CLI and score them strictly.

    python benchmarks/scenarios.py [--dir DIR ...] [--planner offline] [--json OUT]

By default both shared sets run: `../shared/scenarios` (13 kinds) and `../shared/scenarios-hard`
(12 kinds with the shapes of real data). In a clone without `../shared`, the project's own
generator makes one scenario per cause kind instead (and says so).

A scenario is found when every truth cause is among the report's first three root causes with the
same kind (and detail, for data quality) and exactly the same segment. Each of those first three
that matches no truth cause, and is not a drill-down of one (its segment contains the truth's), is a
false cause; for a `no_change` truth, any other cause is false. A person acts on every listed cause.
A driver of the metric's tree (`driver_change`: sessions fell, conversion held) is a second axis of
the same move, not a rival of a planted segment: it is not counted among them.
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
SETS = [ROOT.parent / "shared" / "scenarios", ROOT.parent / "shared" / "scenarios-hard"]


def matches(truth: dict, cause: dict) -> bool:
    if cause["kind"] != truth["kind"] or cause["segment"] != truth["segment"]:
        return False
    return not truth.get("detail") or cause.get("detail") == truth["detail"]


def cause_found(truth: dict, causes: list[dict]) -> bool:
    return any(matches(truth, c) for c in causes[:3])


SECOND_AXIS = {"driver_change"}  # which factor of a tree moved (sessions, conversion): not where or
# why, so no rival of a planted cause; the host re-computes it, tests/kinds/test_driver_tree.py judges it


def false_causes(truths: list[dict], causes: list[dict]) -> list[dict]:
    """Causes among the first three that match no truth and are no drill-down of one."""
    causes = [c for c in causes if c["kind"] not in SECOND_AXIS]
    if any(t["kind"] == "no_change" for t in truths):
        return [c for c in causes[:3] if c["kind"] != "no_change"]

    def explained(c: dict) -> bool:
        return any(
            matches(t, c)
            or (c["kind"] == t["kind"] and t["segment"] and t["segment"].items() <= c["segment"].items())
            for t in truths
        )

    return [c for c in causes[:3] if not explained(c)]


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
    false = false_causes(truth["causes"], causes)
    return {
        "scenario": folder.name,
        "found": found,
        "false": len(false),
        "truth": truth["causes"],
        "reported": [
            {k: c.get(k) for k in ("kind", "segment", "detail", "contribution")} for c in causes[:3]
        ],
        "iterations": report["stats"]["iterations"],
        "elapsed_s": round(elapsed, 2),
    }


def generated_set(folder: Path) -> Path:
    """One scenario per cause kind from the project's own generator, in the shared sets' format."""
    from investigator.sources.synth import CAUSES, generate

    for cause in CAUSES:
        frame, truth = generate(cause, seed=7)
        case = folder / cause
        case.mkdir(parents=True)
        frame.to_parquet(case / "data.parquet", index=False)
        (case / "truth.json").write_text(json.dumps({**truth, "data": "data.parquet"}, default=str))
    return folder


def run_set(folder: Path, planner: str, workers: int) -> dict:
    cases = sorted(p for p in folder.iterdir() if (p / "truth.json").exists())
    with ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda f: run_scenario(f, planner), cases))
    print(f"== {folder}")
    for r in results:
        mark = "found" if r["found"] else "MISSED"
        print(
            f"{r['scenario']:22s} {mark:7s} {r.get('false', '-')!s:>2} false "
            f"{r.get('iterations', '-'):>3} it {r['elapsed_s']:6.1f}s  "
            f"{r.get('reported', r.get('error', ''))}"
        )
    found, false = sum(r["found"] for r in results), sum(r.get("false", 0) for r in results)
    print(f"{found}/{len(results)} scenarios found, {false} false causes")
    return {"set": str(folder), "found": found, "total": len(results), "false": false, "results": results}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dir", type=Path, action="append", help="a scenario set (repeatable)")
    ap.add_argument("--planner", default="offline")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        dirs = args.dir or [d for d in SETS if d.exists()]
        if not dirs:
            print(
                "../shared is absent: scoring scenarios made by investigator.sources.synth", file=sys.stderr
            )
            dirs = [generated_set(Path(tmp) / "generated")]
        missing = [d for d in dirs if not d.exists()]
        if missing:
            print(f"no scenarios at {', '.join(map(str, missing))}", file=sys.stderr)
            return 2
        sets = [run_set(d, args.planner, args.workers) for d in dirs]
    summary = {s["set"]: {k: s[k] for k in ("found", "total", "false")} for s in sets}
    print(json.dumps({"sets": summary}))
    if args.json:
        args.json.write_text(json.dumps(sets, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
