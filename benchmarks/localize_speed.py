"""Time `localize` against a brute-force reference on the same tables.

Usage: python benchmarks/localize_speed.py [--data DIR] [--cases N] [--leaves N]
The reference enumerates every element up to depth 3 with one pandas groupby per combination of
attributes and ranks elements by explanatory power (their share of the total change). Tables: a
few B0 cases from DIR (default ../shared/rca-benchmarks) and a generated table with 5 attributes
of ~100 values each. Prints a table and one JSON line with the speed-up ratios.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd

from investigator.analysis.localize import localize

DEFAULT_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "rca-benchmarks"


def reference(
    df: pd.DataFrame, dims: list[str], actual: str, expected: str, k: int = 3
) -> list[dict[str, str]]:
    """Brute force: every element up to depth 3, top-k by explanatory power."""
    total = df[actual].sum() - df[expected].sum()
    rows = []
    for depth in range(1, min(3, len(dims)) + 1):
        for cuboid in combinations(dims, depth):
            sums = df.groupby(list(cuboid), observed=True)[[actual, expected]].sum()
            power = (sums[actual] - sums[expected]) / (total if total else 1.0)
            for key, value in power.items():
                values = key if isinstance(key, tuple) else (key,)
                rows.append((abs(value), dict(zip(cuboid, map(str, values), strict=True))))
    rows.sort(key=lambda r: -r[0])
    return [segment for _, segment in rows[:k]]


def generated_table(n_leaves: int, seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    """5 attributes x 100 values, random distinct leaves, one planted depth-2 cause."""
    rng = np.random.default_rng(seed)
    dims = [f"attr{i}" for i in range(5)]
    codes = np.unique(rng.integers(0, 100, size=(n_leaves, 5)), axis=0)
    df = pd.DataFrame({d: [f"{d}_{v}" for v in codes[:, i]] for i, d in enumerate(dims)})
    base = rng.lognormal(3.0, 1.0, len(df))
    df["predict"] = rng.poisson(base).astype(float)
    cause = (df["attr1"] == "attr1_7") & (df["attr3"] == "attr3_42")
    df["real"] = rng.poisson(base * np.where(cause, 0.3, 1.0)).astype(float)
    return df, dims


def timed(fn: Callable[[], object], repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def tables(data: Path, n_cases: int, n_leaves: int) -> list[tuple[str, pd.DataFrame, list[str]]]:
    out = []
    b0 = data / "B0"
    if b0.is_dir():
        files = sorted(b0.glob("B_cuboid_layer_3_n_ele_3/*.csv"))
        for path in [p for p in files if p.stem != "injection_info"][:n_cases]:
            out.append((f"B0/{path.stem}", pd.read_csv(path), ["a", "b", "c", "d"]))
    frame, dims = generated_table(n_leaves)
    out.append((f"generated 5x100 ({len(frame)} leaves)", frame, dims))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cases", type=int, default=3, help="B0 cases to time")
    parser.add_argument("--leaves", type=int, default=100_000, help="leaves in the generated table")
    args = parser.parse_args()
    ratios: dict[str, float] = {}
    print(f"{'table':40} {'localize s':>11} {'reference s':>12} {'speed-up':>9}")
    for name, frame, dims in tables(args.data, args.cases, args.leaves):
        ours = timed(lambda f=frame, d=dims: localize(f, d, "real", "predict"))
        ref = timed(lambda f=frame, d=dims: reference(f, d, "real", "predict"), repeat=1)
        ratios[name] = round(ref / ours, 2)
        print(f"{name:40} {ours:11.3f} {ref:12.3f} {ref / ours:8.1f}x")
    print(json.dumps({"speedup_reference_over_localize": ratios}))


if __name__ == "__main__":
    main()
