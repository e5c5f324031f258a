"""Variations of the hard kinds (shapes of real data that fool simple tools), made here from the
planted-cause generator with other names, seeds and magnitudes, and scored as strictly as the
shared hard set: every planted cause among the first three, and no cause that matches none."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.kernels.inprocess import InProcessKernel
from investigator.planners.offline import OfflinePlanner
from investigator.runner import new_run, run_loop
from investigator.sources.request import Request
from investigator.sources.synth import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from scenarios import cause_found, false_causes

DIMS = {
    "region": ["north", "south", "east", "west", "central", "islands"],
    "device": ["desktop", "tablet", "phone"],
    "source": ["seo", "sem", "display", "referral", "push"],
    "product": ["basic", "plus", "pro", "team"],
}
END = pd.Timestamp("2026-03-29")


def in_window(frame: pd.DataFrame, days: int = 7) -> pd.Series:
    return pd.to_datetime(frame["date"]) > END - pd.Timedelta(days=days)


def offsetting(seed: int, down: float, up: float) -> tuple[pd.DataFrame, list[dict]]:
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    w = in_window(frame)
    frame.loc[w & (frame["region"] == "south"), "revenue"] *= down
    frame.loc[w & (frame["source"] == "display"), "revenue"] *= up
    return frame, [
        {"kind": "segment_change", "segment": {"region": "south"}},
        {"kind": "segment_change", "segment": {"source": "display"}},
    ]


def data_problem_and_drop(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict]]:
    frame, _ = generate("segment_change", seed=seed, dims=DIMS, segment={"source": "sem"}, factor=factor)
    last = pd.to_datetime(frame["date"]) == END
    frame = frame[~(last & (frame["region"] == "east"))].reset_index(drop=True)
    return frame, [
        {"kind": "data_quality", "detail": "missing_data", "segment": {"region": "east"}},
        {"kind": "segment_change", "segment": {"source": "sem"}},
    ]


def noisy_no_change(seed: int, noise: float) -> tuple[pd.DataFrame, list[dict]]:
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    day = pd.factorize(frame["date"])[0]
    wobble = np.random.default_rng(seed).lognormal(0, noise, day.max() + 1)  # whole days swing
    frame["revenue"] = frame["revenue"] * wobble[day]
    return frame, [{"kind": "no_change", "segment": {}}]


def profit_costs(seed: int, rise: float) -> tuple[pd.DataFrame, list[dict]]:
    """Profit = margin x revenue - costs; many cells lose money; costs rise on one device."""
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    rng = np.random.default_rng(seed)
    margin = 0.3
    costs = frame["revenue"] * margin * rng.uniform(0.5, 1.3, len(frame))
    costs = costs.where(~(in_window(frame) & (frame["device"] == "phone")), costs * rise)
    frame["profit"] = (frame["revenue"] * margin - costs).round(2)
    return frame, [{"kind": "segment_change", "segment": {"device": "phone"}}]


CASES = {
    "offsetting-1": (offsetting, 1, (0.55, 1.6), "revenue"),
    "offsetting-2": (offsetting, 2, (0.7, 1.35), "revenue"),
    "data_problem_and_drop-1": (data_problem_and_drop, 3, (0.6,), "revenue"),
    "data_problem_and_drop-2": (data_problem_and_drop, 4, (0.5,), "revenue"),
    "noisy_no_change-1": (noisy_no_change, 5, (0.12,), "revenue"),
    "noisy_no_change-2": (noisy_no_change, 6, (0.2,), "revenue"),
    "profit_costs-1": (profit_costs, 7, (1.6,), "profit"),
    "profit_costs-2": (profit_costs, 8, (1.4,), "profit"),
}


KNOWN_GAPS = {
    "offsetting-2": "a +35% rise across one source under a -30% drop of one region, the total within "
    "normal variation: localization names only the region",
}


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[c])) if c in KNOWN_GAPS else c
     for c in CASES],
)  # fmt: skip
def test_hard_kind_variation_is_found_with_no_false_cause(case: str, tmp_path: Path) -> None:
    make, seed, args, metric = CASES[case]
    frame, truth = make(seed, *args)
    path = tmp_path / "data.parquet"
    frame.to_parquet(path, index=False)
    settings = load_settings(runs_dir=tmp_path / "runs")
    request = Request(metric=metric, data=str(path), end=END.date(), dimensions=list(DIMS))
    report = run_loop(
        new_run(request, path, settings, "offline"), settings, OfflinePlanner(), InProcessKernel()
    )
    causes = [c.model_dump() for c in report.root_causes]
    assert all(cause_found(t, causes) for t in truth), (truth, causes[:3])
    assert false_causes(truth, causes) == [], causes[:3]
