"""Variations of the hard kinds (shapes of real data that fool simple tools), made here from the
planted-cause generator with other names, seeds and magnitudes, and scored as strictly as the
shared hard set: every planted cause among the first three, and no cause that matches none."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.kernels.inprocess import InProcessKernel
from investigator.planners.offline import OfflinePlanner
from investigator.request import Request
from investigator.runner import run_loop
from investigator.runs import new_run
from investigator.sources.synth import generate

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
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


def offsetting(seed: int, down: float, up: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    w = in_window(frame)
    frame.loc[w & (frame["region"] == "south"), "revenue"] *= down
    frame.loc[w & (frame["source"] == "display"), "revenue"] *= up
    return frame, [
        {"kind": "segment_change", "segment": {"region": "south"}},
        {"kind": "segment_change", "segment": {"source": "display"}},
    ]


def data_problem_and_drop(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    frame, _ = generate("segment_change", seed=seed, dims=DIMS, segment={"source": "sem"}, factor=factor)
    last = pd.to_datetime(frame["date"]) == END
    frame = frame[~(last & (frame["region"] == "east"))].reset_index(drop=True)
    return frame, [
        {"kind": "data_quality", "detail": "missing_data", "segment": {"region": "east"}},
        {"kind": "segment_change", "segment": {"source": "sem"}},
    ]


def noisy_no_change(seed: int, noise: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    day = pd.factorize(frame["date"])[0]
    wobble = np.random.default_rng(seed).lognormal(0, noise, day.max() + 1)  # whole days swing
    frame["revenue"] = frame["revenue"] * wobble[day]
    return frame, [{"kind": "no_change", "segment": {}}]


def profit_costs(seed: int, rise: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Profit = margin x revenue - costs; many cells lose money; costs rise on one device."""
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    rng = np.random.default_rng(seed)
    margin = 0.3
    costs = frame["revenue"] * margin * rng.uniform(0.5, 1.3, len(frame))
    costs = costs.where(~(in_window(frame) & (frame["device"] == "phone")), costs * rise)
    frame["profit"] = (frame["revenue"] * margin - costs).round(2)
    return frame, [{"kind": "segment_change", "segment": {"device": "phone"}}]


def drop_3d(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A combination of three values, about a tenth of revenue, moves; none of its parents alone."""
    seg = {"region": "east", "device": "phone", "source": "sem"}
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    cell = (frame["region"] == "east") & (frame["device"] == "phone") & (frame["source"] == "sem")
    frame.loc[cell, "revenue"] *= 0.1 * frame["revenue"].sum() / frame.loc[cell, "revenue"].sum()
    frame.loc[cell & in_window(frame), "revenue"] *= factor
    return frame, [{"kind": "segment_change", "segment": seg}]


def simpson(seed: int, shift: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Every device converts 3% better, yet traffic moves to the weakest one: the total converts worse."""
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    strength = frame["device"].map({"desktop": 1.0, "tablet": 0.75, "phone": 0.4})
    frame["orders"] = np.round(frame["orders"] * strength).astype(int)
    weakest = "phone"
    w = in_window(frame)
    moved = w & (frame["device"] == weakest)
    for col in ("sessions", "orders"):
        frame.loc[moved, col] = np.round(frame.loc[moved, col] * shift).astype(int)
    frame.loc[w, "orders"] = np.round(frame.loc[w, "orders"] * 1.03).astype(int)
    return frame, [{"kind": "mix_shift", "segment": {"device": weakest}}]


def small_segment(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """The fourth-largest source changes; the total moves a few percent."""
    frame, _ = generate("no_change", seed=seed, dims=DIMS)
    fourth = str(frame.groupby("source")["revenue"].sum().sort_values(ascending=False).index[3])
    frame.loc[in_window(frame) & (frame["source"] == fourth), "revenue"] *= factor
    return frame, [{"kind": "segment_change", "segment": {"source": fourth}}]


def timestamps(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """Four events a day at set hours, in a column of timestamps called `at`."""
    seg = {"device": "desktop"}
    frame, _ = generate("segment_change", seed=seed, dims=DIMS, segment=seg, factor=factor)
    events = frame.loc[frame.index.repeat(4)].reset_index(drop=True)
    hour = np.tile([3, 9, 15, 21], len(frame))
    events["at"] = pd.to_datetime(events.pop("date")) + pd.to_timedelta(hour, unit="h")
    events["revenue"] = events["revenue"] / 4
    return events, [{"kind": "segment_change", "segment": seg}]


def weekly_rows(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """One row per week (dated on its Monday), a four-week window."""
    seg = {"product": "team"}
    frame, _ = generate("segment_change", seed=seed, dims=DIMS, segment=seg, factor=factor, window=28)
    dates = pd.to_datetime(frame["date"])
    frame["date"] = (dates - pd.to_timedelta(dates.dt.day_of_week, unit="D")).dt.date
    weekly = frame.groupby(["date", *DIMS], as_index=False)[["sessions", "orders", "revenue"]].sum()
    return weekly, [{"kind": "segment_change", "segment": seg}]


def nulls_in_dimension(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A tenth of rows have no product, throughout; the cause is in another dimension."""
    seg = {"region": "islands"}
    frame, _ = generate("segment_change", seed=seed, dims=DIMS, segment=seg, factor=factor)
    blank = np.random.default_rng(seed).random(len(frame)) < 0.1
    frame["product"] = frame["product"].astype(object).where(~blank, None)
    return frame, [{"kind": "segment_change", "segment": seg}]


def store_outage(seed: int, stores: int) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """A long tail of stores (sizes fall off like 1/rank); the largest sells nothing all window."""
    dims = {"store": [f"T{i:04d}" for i in range(1, stores + 1)], "device": DIMS["device"]}
    frame, _ = generate("no_change", seed=seed, dims=dims, days=60)
    rank = frame["store"].str[1:].astype(int)
    frame["revenue"] = (frame["revenue"] * 40 / rank).round(2)
    frame.loc[in_window(frame) & (frame["store"] == "T0001"), "revenue"] = 0.0
    return frame, [{"kind": "segment_change", "segment": {"store": "T0001"}}]


def window_28d(seed: int, factor: float) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    seg = {"region": "north", "source": "display"}
    frame, _ = generate("segment_change", seed=seed, dims=DIMS, segment=seg, factor=factor, window=28)
    return frame, [{"kind": "segment_change", "segment": seg}]


CASES: dict[str, tuple[Any, ...]] = {
    "offsetting-1": (offsetting, 1, (0.55, 1.6), "revenue"),
    "offsetting-2": (offsetting, 2, (0.7, 1.35), "revenue"),
    "data_problem_and_drop-1": (data_problem_and_drop, 3, (0.6,), "revenue"),
    "data_problem_and_drop-2": (data_problem_and_drop, 4, (0.5,), "revenue"),
    "noisy_no_change-1": (noisy_no_change, 5, (0.12,), "revenue"),
    "noisy_no_change-2": (noisy_no_change, 6, (0.2,), "revenue"),
    "profit_costs-1": (profit_costs, 7, (1.6,), "profit"),
    "profit_costs-2": (profit_costs, 8, (1.4,), "profit"),
    "segment_drop_3d-1": (drop_3d, 9, (0.2,), "revenue"),
    "segment_drop_3d-2": (drop_3d, 10, (1.8,), "revenue"),
    "simpson_conversion-1": (simpson, 11, (2.0,), "orders/sessions"),
    "simpson_conversion-2": (simpson, 12, (2.6,), "orders/sessions"),
    "small_segment-1": (small_segment, 13, (0.5,), "revenue"),
    "small_segment-2": (small_segment, 14, (1.6,), "revenue"),
    "timestamps-1": (timestamps, 15, (0.6,), "revenue", {"time_column": "at"}),
    "timestamps-2": (timestamps, 16, (1.5,), "revenue", {"time_column": "at"}),
    "weekly_rows-1": (weekly_rows, 17, (0.5,), "revenue", {"window": "4w"}),
    "weekly_rows-2": (weekly_rows, 18, (1.7,), "revenue", {"window": "4w"}),
    "nulls_in_dimension-1": (nulls_in_dimension, 19, (0.5,), "revenue"),
    "nulls_in_dimension-2": (nulls_in_dimension, 20, (1.6,), "revenue"),
    "store_outage-1": (store_outage, 21, (300,), "revenue", {"dimensions": ["store", "device"]}),
    "store_outage-2": (store_outage, 22, (120,), "revenue", {"dimensions": ["store", "device"]}),
    "window_28d-1": (window_28d, 23, (0.6,), "revenue", {"window": "28d"}),
    "window_28d-2": (window_28d, 24, (1.5,), "revenue", {"window": "28d"}),
}


KNOWN_GAPS: dict[str, str] = {}  # none today; a kind the tool misses is marked here, strictly


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, marks=pytest.mark.xfail(strict=True, reason=KNOWN_GAPS[c])) if c in KNOWN_GAPS else c
     for c in CASES],
)  # fmt: skip
def test_hard_kind_variation_is_found_with_no_false_cause(case: str, tmp_path: Path) -> None:
    make, seed, args, metric, *more = CASES[case]
    frame, truth = make(seed, *args)
    path = tmp_path / "data.parquet"
    frame.to_parquet(path, index=False)
    settings = load_settings(runs_dir=tmp_path / "runs")
    fields = {"dimensions": list(DIMS), **(more[0] if more else {})}
    request = Request(metric=metric, data=str(path), end=END.date(), **fields)
    report = run_loop(
        new_run(request, path, settings, "offline"), settings, OfflinePlanner(), InProcessKernel()
    )
    causes = [c.model_dump() for c in report.root_causes]
    assert all(cause_found(t, causes) for t in truth), (truth, causes[:3])
    assert false_causes(truth, causes) == [], causes[:3]
