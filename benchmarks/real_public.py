"""Score and time the real public questions (`../shared/real-public/cases.py`), one cold CLI run each.

    python benchmarks/real_public.py [--bin DIR] [--only NAME] [--json OUT]

Each case runs `investigate ... --quiet --json` in a scratch folder with the warm helper off, as
the shared scorer runs it, and is judged by that scorer's own `check`. Prints one line per case
(verdict and seconds), then the score, the median and the slowest case. The target is under 5 s a
case, cold, on the 2-core machine this project runs on. Needs `../shared/real-public` beside the
project; says so and exits 0 without it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT.parent / "shared" / "real-public" / "cases.py"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = str(Path(sys.executable).parent)
    parser.add_argument("--bin", default=here, help="folder holding `investigate`")
    parser.add_argument("--only", help="one case by name")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    if not CASES.exists():
        print(f"skipped: {CASES} not found (the shared real-public set lies beside the project)")
        return 0
    spec = importlib.util.spec_from_file_location("real_public_cases", CASES)
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    names = [args.only] if args.only else list(cases.CASES)
    results = []
    for name in names:
        started = time.perf_counter()
        why = cases.check(name, str(Path(args.bin).resolve()))
        seconds = time.perf_counter() - started
        results.append({"case": name, "ok": why is None, "why": why, "seconds": round(seconds, 2)})
        print(f"{name:42} {'ok' if why is None else why[:70]:72} {seconds:5.1f} s", flush=True)
    times = [r["seconds"] for r in results]
    ok = sum(r["ok"] for r in results)
    slowest = max(results, key=lambda r: r["seconds"])
    under = sum(t < 5 for t in times)
    print(
        f"real public: {ok}/{len(results)}; median {statistics.median(times):.1f} s a case, cold; "
        f"slowest {slowest['case']} {slowest['seconds']:.1f} s; {under}/{len(times)} under 5 s"
    )
    if args.json:
        args.json.write_text(json.dumps({"score": ok, "cases": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
