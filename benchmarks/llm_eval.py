"""Measure the LLM planner on the planted-cause scenarios, next to the offline planner.

    OPENAI_API_KEY=sk-... python benchmarks/llm_eval.py --model gpt-4o-mini
    python benchmarks/llm_eval.py --base-url http://localhost:8000/v1 --model Qwen/Qwen2.5-7B-Instruct
    python benchmarks/llm_eval.py --base-url http://localhost:11434/v1 --model llama3.1 --mode json
    python benchmarks/llm_eval.py --fake        # dry run against the scripted fake server, no model

Per scenario and planner: found (every truth cause among the first three root causes, as in
benchmarks/scenarios.py), iterations, tokens, seconds, and steps that fell back to the offline
planner. `--fake` answers every call with a schema-violating reply, so each step falls back: it
checks the harness (HTTP, validation, fallback, accounting) and should match the offline column;
it says nothing about a model.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scenarios import SETS, cause_found, generated_set

from investigator.config import load_settings
from investigator.errors import InvestigatorError
from investigator.llm import LLMSettings, load_llm_settings
from investigator.planners.llm import FALLBACK, LLMPlanner
from investigator.planners.offline import OfflinePlanner
from investigator.request import Request
from investigator.run.seams import Planner
from investigator.run.state import run_dir
from investigator.runner import run_loop
from investigator.runs import new_run
from investigator.testing import FakeOpenAI, answer
from sandbox.kernels.local import LocalKernel


def run(folder: Path, planner: str, llm: LLMSettings | None, max_iterations: int | None) -> dict[str, Any]:
    """One scenario with one planner, in-process on a local kernel."""
    truth = json.loads((folder / "truth.json").read_text())
    data = str(folder / truth["data"])
    request = Request(
        metric=truth["metric"],
        data=data,
        window=truth["window"],
        end=truth["end"],
        time_column=truth["time_column"],
        dimensions=truth["dimensions"],
    )
    started = time.monotonic()
    row: dict[str, Any] = {"scenario": folder.name, "planner": planner}
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(runs_dir=Path(tmp) / "runs", max_iterations=max_iterations)
        chosen: Planner = OfflinePlanner() if llm is None else LLMPlanner(llm, settings, on_wait=_say)
        kernel = None
        try:
            state = new_run(request, data, settings, planner=chosen.name)
            kernel = LocalKernel(run_dir(settings.runs_dir, state.run_id) / "workspace")
            report = run_loop(state, settings, chosen, kernel)
        except InvestigatorError as e:
            return {**row, "found": False, "error": str(e), "elapsed_s": round(time.monotonic() - started, 1)}
        finally:
            if kernel is not None:
                kernel.shutdown()
    causes = [c.model_dump(mode="json") for c in report.root_causes]
    return {
        **row,
        "found": all(cause_found(t, causes) for t in truth["causes"]),
        "status": report.status,
        "iterations": report.stats.iterations,
        "tokens": report.stats.tokens.get("total", 0),
        "fallbacks": sum(f.summary.startswith(FALLBACK) for f in report.findings),
        "verified": [c.verified for c in report.root_causes[:3]],
        "reported": [{k: c[k] for k in ("kind", "segment", "contribution")} for c in causes[:3]],
        "blockers": report.blockers,
        "elapsed_s": round(time.monotonic() - started, 1),
    }


def reachable(llm: LLMSettings) -> str | None:
    """Why the endpoint cannot be used, or None. Any HTTP answer counts as reachable."""
    if llm.api_key is None and llm.base_url is None:
        return "set OPENAI_API_KEY (for OpenAI) or pass --base-url of an OpenAI-compatible server"
    try:
        httpx.get(llm.endpoint.rstrip("/") + "/models", timeout=5.0)
    except httpx.HTTPError as e:
        return f"no OpenAI-compatible server answers at {llm.endpoint} ({type(e).__name__}: {e})"
    return None


def scenario_folders(chosen: Path | None, scratch: Path) -> list[Path]:
    """The given folder, else ../shared/scenarios, else one generated scenario per cause kind."""
    if chosen is None and not SETS[0].exists():
        print("no ../shared: using scenarios made by investigator.sources.synth", file=sys.stderr)
        chosen = generated_set(scratch / "generated")
    folder = chosen or SETS[0]
    return sorted(p for p in folder.iterdir() if (p / "truth.json").exists()) if folder.exists() else []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL, else OpenAI)")
    ap.add_argument("--model", help="model name (default: configs/llm.yaml)")
    ap.add_argument(
        "--mode", choices=["tools", "json", "json_schema", "md_json"], help="structured-output mode"
    )
    ap.add_argument(
        "--dir",
        type=Path,
        help="scenario folders (each with truth.json); default ../shared/scenarios, else generated",
    )
    ap.add_argument("--only", help="comma-separated scenario names")
    ap.add_argument("--max-iterations", type=int)
    ap.add_argument("--no-offline", action="store_true", help="skip the offline baseline")
    ap.add_argument("--fake", action="store_true", help="dry run against the scripted fake server")
    ap.add_argument("--json", type=Path, help="write every row here")
    args = ap.parse_args()

    fake = FakeOpenAI(default=lambda seen: answer({"not": "what was asked"})).start() if args.fake else None
    scratch = tempfile.TemporaryDirectory()
    try:
        llm = load_llm_settings(
            base_url=fake.url if fake else args.base_url,
            api_key="sk-fake" if fake else None,
            model=args.model,
            mode=args.mode,
            max_validation_retries=0 if fake else None,
        )
        problem = reachable(llm)  # before anything else: a missing server is the first thing to say
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            return 2
        folders = scenario_folders(args.dir, Path(scratch.name))
        if args.only:
            folders = [f for f in folders if f.name in set(args.only.split(","))]
        if not folders:
            print(f"no scenarios under {args.dir}", file=sys.stderr)
            return 2
        rows = []
        for folder in folders:
            pair = [] if args.no_offline else [run(folder, "offline", None, args.max_iterations)]
            pair.append(run(folder, "llm", llm, args.max_iterations))
            rows += pair
            print(" | ".join(_cell(r) for r in pair), flush=True)
    finally:
        scratch.cleanup()
        if fake:
            fake.stop()
    print(_summary(rows, llm.model if not fake else "fake server"))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def _cell(r: dict[str, Any]) -> str:
    head = f"{r['scenario']:18s} {r['planner']:7s}"
    if "error" in r:
        return f"{head} ERROR {r['error'][:160]}"
    mark = "found " if r["found"] else "MISSED"
    fallbacks = f" {r['fallbacks']} fallback(s)" if r["planner"] == "llm" else ""
    return f"{head} {mark} {r['iterations']:>2} it {r['tokens']:>7} tok {r['elapsed_s']:6.1f}s{fallbacks}"


def _summary(rows: list[dict[str, Any]], model: str) -> str:
    lines = [f"\nmodel: {model}"]
    for planner in ("offline", "llm"):
        mine = [r for r in rows if r["planner"] == planner]
        if not mine:
            continue
        ok = [r for r in mine if "error" not in r]
        found = sum(r["found"] for r in mine)
        its = sum(r["iterations"] for r in ok) / max(len(ok), 1)
        tokens = sum(r["tokens"] for r in ok)
        secs = sum(r["elapsed_s"] for r in mine)
        lines.append(
            f"{planner:7s} {found}/{len(mine)} found, {its:.1f} iterations on average, {tokens} tokens, "
            f"{secs:.0f}s, {len(mine) - len(ok)} error(s)"
        )
    return "\n".join(lines)


def _say(seconds: float, reason: str) -> None:
    print(f"  waiting {seconds:.0f}s: {reason}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
