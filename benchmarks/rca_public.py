"""Score `localize` / `localize_ratio` on the public B0 (additive) and RS (ratio) benchmark layouts.

Usage: python benchmarks/rca_public.py --data DIR [--json OUT] [--limit N]
(--json also holds every case's truth and prediction, to study the misses.)
DIR holds B0/<setting>/*.csv + injection_info.csv and/or RS/*.csv + anomaly.yaml (see the
README there). Exact-match F1 summed over the cases of each setting, as the papers score it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import yaml

from investigator.analysis.localize import Element, localize, localize_ratio

# Published best per setting (README table), for display only: (method, F1, median s).
PUBLISHED_BEST = {
    "B_cuboid_layer_1_n_ele_1": ("autoroot", 1.00, 0.17),
    "B_cuboid_layer_1_n_ele_2": ("riskloc", 1.00, 0.15),
    "B_cuboid_layer_1_n_ele_3": ("riskloc", 1.00, 0.14),
    "B_cuboid_layer_2_n_ele_1": ("riskloc", 1.00, 0.22),
    "B_cuboid_layer_2_n_ele_2": ("riskloc", 1.00, 0.34),
    "B_cuboid_layer_2_n_ele_3": ("riskloc", 0.90, 0.40),
    "B_cuboid_layer_3_n_ele_1": ("squeeze", 1.00, 8.11),
    "B_cuboid_layer_3_n_ele_2": ("riskloc", 0.95, 0.71),
    "B_cuboid_layer_3_n_ele_3": ("squeeze", 0.93, 10.32),
    "RS": ("robustspot", 0.43, 0.50),
}
RS_HISTORY_MINUTES = 4


@dataclass
class Case:
    """One benchmark instance: the input table, its attributes and the true elements."""

    name: str
    frame: pd.DataFrame
    dims: list[str]
    truth: set[str]


@dataclass
class SettingResult:
    dataset: str
    setting: str
    cases: int
    tp: int
    fp: int
    fn: int
    f1: float
    precision: float
    recall: float
    median_s: float
    per_case: list[dict[str, object]]


def element_key(pairs: dict[str, str]) -> str:
    """Canonical 'a=x&b=y' form, pairs sorted, as the published evaluation compares them."""
    return "&".join(sorted(f"{k}={v}" for k, v in pairs.items()))


def b0_cases(folder: Path, limit: int | None) -> Iterator[Case]:
    """Cases of one B0 setting: every <timestamp>.csv with its truth from injection_info.csv."""
    info = pd.read_csv(folder / "injection_info.csv")
    truth_by_ts = dict(zip(info["timestamp"].astype(str), info["set"], strict=True))
    files = sorted(p for p in folder.glob("*.csv") if p.stem in truth_by_ts)
    for path in files[:limit]:
        frame = pd.read_csv(path)
        dims = sorted(c for c in frame.columns if c not in ("real", "predict"))
        truth = {"&".join(sorted(e.split("&"))) for e in truth_by_ts[path.stem].split(";")}
        yield Case(path.stem, frame, dims, truth)


def rs_cases(folder: Path, limit: int | None) -> Iterator[Case]:
    """RS cases: ratio (cnt - value)/cnt at the anomalous minute vs the mean of 4 minutes before."""
    anomalies = yaml.safe_load((folder / "anomaly.yaml").read_text(encoding="utf-8"))
    present = [a for a in anomalies if (folder / f"{a['data']}.csv").exists()]
    for anomaly in present[:limit]:
        raw = pd.read_csv(folder / f"{anomaly['data']}.csv")
        dims = [c for c in raw.columns if c not in ("min", "value", "cnt")]
        causes = anomaly["cause"] if isinstance(anomaly["cause"], list) else [anomaly["cause"]]
        truth = {element_key({k: str(v) for k, v in c.items()}) for c in causes}
        yield Case(anomaly["data"], rs_frame(raw, dims, int(anomaly["timestamp"])), dims, truth)


def rs_frame(raw: pd.DataFrame, dims: list[str], ts: int) -> pd.DataFrame:
    """Leaves present at `ts`, forecast = per-leaf mean over the minutes before (as published)."""
    raw = raw.assign(num=raw["cnt"] - raw["value"])
    raw[dims] = raw[dims].astype(str)
    now = raw[raw["min"] == ts].groupby(dims, as_index=False)[["num", "cnt"]].sum()
    hist_minutes = [ts - 60 * i for i in range(1, RS_HISTORY_MINUTES + 1)]
    hist = raw[raw["min"].isin(hist_minutes)].groupby(dims)[["num", "cnt"]].mean()
    hist = hist.rename(columns={"num": "num_predict", "cnt": "cnt_predict"})
    merged = now.merge(hist, left_on=dims, right_index=True, how="left").fillna(0.0)
    return merged.rename(columns={"num": "num_real", "cnt": "cnt_real"})


def predict(case: Case, ratio: bool) -> tuple[list[Element], float]:
    start = time.perf_counter()
    if ratio:
        found = localize_ratio(case.frame, case.dims, "num_real", "num_predict", "cnt_real", "cnt_predict")
    else:
        found = localize(case.frame, case.dims, "real", "predict")
    return found, time.perf_counter() - start


def score_setting(dataset: str, setting: str, cases: Iterator[Case], ratio: bool) -> SettingResult:
    tp = fp = fn = n = 0
    times: list[float] = []
    per_case: list[dict[str, object]] = []
    for case in cases:
        found, seconds = predict(case, ratio)
        pred = {element_key(e.segment) for e in found}
        hits = len(pred & case.truth)
        per_case.append(
            {
                "case": case.name,
                "truth": sorted(case.truth),
                "predicted": [
                    {
                        "element": element_key(e.segment),
                        "share": round(e.share, 3),
                        "score": round(e.score, 1),
                    }
                    for e in found
                ],
                "hits": hits,
            }
        )
        tp, fp, fn, n = tp + hits, fp + len(pred) - hits, fn + len(case.truth) - hits, n + 1
        times.append(seconds)
    f1 = 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 0.0
    return SettingResult(
        dataset=dataset,
        setting=setting,
        cases=n,
        tp=tp,
        fp=fp,
        fn=fn,
        f1=round(f1, 4),
        precision=round(tp / (tp + fp), 4) if tp + fp else 0.0,
        recall=round(tp / (tp + fn), 4) if tp + fn else 0.0,
        median_s=round(statistics.median(times), 4) if times else 0.0,
        per_case=per_case,
    )


def run(data: Path, limit: int | None) -> list[SettingResult]:
    results = []
    b0 = data / "B0"
    if b0.is_dir():
        for folder in sorted(p for p in b0.iterdir() if p.is_dir()):
            results.append(score_setting("B0", folder.name, b0_cases(folder, limit), False))
    rs = data / "RS"
    if (rs / "anomaly.yaml").exists():
        results.append(score_setting("RS", "RS", rs_cases(rs, limit), True))
    return results


def print_table(results: list[SettingResult]) -> None:
    head = f"{'dataset':7} {'setting':26} {'cases':>5} {'TP':>4} {'FP':>4} {'FN':>4} "
    head += f"{'F1':>5} {'prec':>5} {'rec':>5} {'med s':>6} | published best"
    print(head)
    for r in results:
        best = PUBLISHED_BEST.get(r.setting)
        pub = f"{best[0]} {best[1]:.2f} / {best[2]:.2f}s" if best else "-"
        print(
            f"{r.dataset:7} {r.setting:26} {r.cases:5d} {r.tp:4d} {r.fp:4d} {r.fn:4d} "
            f"{r.f1:5.2f} {r.precision:5.2f} {r.recall:5.2f} {r.median_s:6.3f} | {pub}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with B0/ and/or RS/")
    parser.add_argument("--json", type=Path, help="results file (with each case's truth, prediction)")
    parser.add_argument("--limit", type=int, help="at most N cases per setting (quick run)")
    args = parser.parse_args()
    results = run(args.data, args.limit)
    print_table(results)
    if args.json:
        payload = {"settings": [asdict(r) for r in results]}
        args.json.write_text(json.dumps(payload, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
