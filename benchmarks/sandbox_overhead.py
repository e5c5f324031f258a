"""What the sandbox costs: start time, per-execute round trip, and the memory of an idle session.

Usage: python benchmarks/sandbox_overhead.py [--n 50] [--json OUT] [--no-docker]

Round trips run a trivial cell (`x = 1`) so only the machinery is timed:
  direct      exec() in this process (no kernel at all)
  jupyter     LocalKernel / DockerKernel driven directly with jupyter_client (no MCP)
  mcp         McpKernel: MCP over stdio to a `python -m sandbox` child, plus the DataFrame
              persistence call the session makes after each execution
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from investigator.kernels.mcp import McpKernel  # noqa: E402
from sandbox.kernels.local import LocalKernel  # noqa: E402


def timed(fn: Callable[[], Any], n: int) -> dict[str, float]:
    fn()  # warm up
    runs = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - t) * 1000)
    runs.sort()
    return {
        "median_ms": round(statistics.median(runs), 2),
        "p95_ms": round(runs[int(0.95 * (len(runs) - 1))], 2),
    }


def rss_mb(pid: int) -> float:
    """Resident memory of a process and its descendants (a local kernel under its server)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
            kids = Path(f"/proc/{p}/task/{p}/children").read_text().split()
        except OSError:
            continue
        todo += [int(k) for k in kids]
    return round(total / 1024, 1)


def container_mb(kernel: Any) -> float:
    stats = kernel.container.stats(stream=False)["memory_stats"]
    usage = stats.get("usage", 0) - stats.get("stats", {}).get("cache", 0)
    return round(usage / 2**20, 1)


def bench(n: int, docker: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"n": n}
    scope: dict[str, Any] = {}
    out["direct_exec"] = timed(lambda: exec("x = 1", scope), n)
    tmp = Path(tempfile.mkdtemp(prefix="sandbox-bench-"))

    t = time.perf_counter()
    with LocalKernel(tmp / "local") as lk:
        out["local_start_s"] = round(time.perf_counter() - t, 2)
        out["local_jupyter"] = timed(lambda: lk.execute("x = 1"), n)
        time.sleep(1)
        assert lk.km is not None and lk.km.provisioner is not None
        out["local_idle_kernel_mb"] = rss_mb(lk.km.provisioner.pid)  # type: ignore[attr-defined]
        lk.execute("from investigator.analysis import *")
        time.sleep(1)
        out["local_idle_kernel_with_analysis_mb"] = rss_mb(lk.km.provisioner.pid)  # type: ignore[attr-defined]

    t = time.perf_counter()
    with McpKernel(backend="local", workdir=tmp / "mcp-local") as mk:
        out["local_mcp_session_start_s"] = round(time.perf_counter() - t, 2)
        out["local_mcp"] = timed(lambda: mk.execute("x = 1"), n)

    if docker:
        from sandbox.kernels.docker import DockerKernel

        t = time.perf_counter()
        with DockerKernel(tmp / "docker", memory="1g") as dk:
            out["docker_container_start_s"] = round(time.perf_counter() - t, 2)
            out["docker_jupyter"] = timed(lambda: dk.execute("x = 1"), n)
            time.sleep(1)
            out["docker_idle_container_mb"] = container_mb(dk)
            dk.execute("from investigator.analysis import *")
            time.sleep(1)
            out["docker_idle_container_with_analysis_mb"] = container_mb(dk)

        t = time.perf_counter()
        with McpKernel(backend="docker", workdir=tmp / "mcp-docker", memory="1g") as mk:
            out["docker_mcp_session_start_s"] = round(time.perf_counter() - t, 2)
            out["docker_mcp"] = timed(lambda: mk.execute("x = 1"), n)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-docker", action="store_true")
    args = parser.parse_args()
    docker = not args.no_docker
    if docker:
        try:
            from sandbox.kernels.docker import docker_client

            docker_client()
        except Exception as exc:
            print(f"no Docker daemon ({type(exc).__name__}): docker rows skipped", file=sys.stderr)
            docker = False
    result = bench(args.n, docker)
    text = json.dumps(result, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text)


if __name__ == "__main__":
    main()
