"""An identifier column (a user id, an order id, a SKU) is not a segment: it must not hide a cause."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from investigator.config import MetricDefinition
from investigator.request import Request
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate

from .helpers import notes, run

PLANTED = {"country": "US", "channel": "paid_search"}


def with_user_ids(folder: Path) -> tuple[Path, Path]:
    """The same rows with and without a user id of ~90k distinct values (three rows per cell)."""
    frame, _ = generate("segment_change", seed=3, segment=PLANTED, factor=0.4)
    frame = frame.loc[frame.index.repeat(3)].reset_index(drop=True)
    frame["revenue"] = frame["revenue"] / 3
    ids = np.random.default_rng(0).integers(0, 100_000, len(frame))
    frame["user_id"] = [f"u{i:06d}" for i in ids]
    plain, tagged = folder / "plain.parquet", folder / "tagged.parquet"
    frame.drop(columns="user_id").to_parquet(plain, index=False)
    frame.to_parquet(tagged, index=False)
    return plain, tagged


def test_an_identifier_column_does_not_hide_the_planted_cause(tmp_path: Path) -> None:
    plain, tagged = with_user_ids(tmp_path)
    without, _ = run(plain, tmp_path, metric="sum(revenue)")
    report, state = run(tagged, tmp_path, metric="sum(revenue)")
    assert [c.segment for c in report.root_causes][:1] == [PLANTED]
    assert [c.model_dump(exclude={"verified"}) for c in report.root_causes] == [
        c.model_dump(exclude={"verified"}) for c in without.root_causes
    ]
    assert "user_id" not in state.spec.dimensions
    [note] = [n for n in notes(state) if "user_id" in n]
    assert "identifiers" in note and "--keep-dimensions user_id" in note
    assert note in report.notes  # the report says so, not only the findings


def test_an_identifier_named_in_dimensions_is_still_left_out(tmp_path: Path) -> None:
    _, tagged = with_user_ids(tmp_path)
    request = Request(metric="sum(revenue)", dimensions=["country", "channel", "user_id"])
    spec, _ = resolve(request, tagged, MetricDefinition(expression="revenue"))
    assert spec.dimensions == ["country", "channel"]


def test_keep_dimensions_forces_an_identifier_in(tmp_path: Path) -> None:
    _, tagged = with_user_ids(tmp_path)
    request = Request(metric="sum(revenue)", dimensions=["country", "user_id"], keep_dimensions=["user_id"])
    spec, _ = resolve(request, tagged, MetricDefinition(expression="revenue"))
    assert spec.dimensions == ["country", "user_id"] and not spec.notes


def test_a_long_tail_of_stores_is_a_dimension_not_an_identifier(tmp_path: Path) -> None:
    stores = {"store": [f"T{i:04d}" for i in range(1, 1501)], "device": ["web", "app"]}
    frame, _ = generate("no_change", seed=1, dims=stores, days=30)
    path = tmp_path / "stores.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="sum(revenue)"), path, MetricDefinition(expression="revenue"))
    assert spec.dimensions == ["store", "device"]


def test_an_order_id_on_daily_rows_is_an_identifier(tmp_path: Path) -> None:
    days = pd.date_range("2026-01-01", periods=60).date
    frame = pd.DataFrame({"date": np.repeat(days, 50), "country": "US", "revenue": 1.0})
    frame["order_id"] = [f"o{i}" for i in range(len(frame))]
    path = tmp_path / "orders.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="sum(revenue)"), path, MetricDefinition(expression="revenue"))
    assert spec.dimensions == ["country"] and "order_id (3,000 distinct values)" in spec.notes[0]


def test_a_label_of_the_periods_is_not_a_cause(tmp_path: Path) -> None:
    """Yearly rows carry the year's weather: one value in the baseline year, another in the window.
    Read as a segment it 'explains' 964% of the change; it names the periods, it splits nothing."""
    from investigator.sources.synth import generate_shaped

    frame, truth = generate_shaped(
        "yearly", plant="segment_change", seed=4, segment={"region": "east"}, factor=0.6
    )
    path = tmp_path / "yearly.csv"
    frame.to_csv(path, index=False)
    report, state = run(path, tmp_path, metric="value", window="1y", time_column="year")
    assert [c.segment for c in report.root_causes][:1] == [truth["causes"][0]["segment"]]
    assert "weather" not in state.spec.dimensions and "weather" not in str(report.root_causes)
    [note] = [n for n in report.notes if "weather" in n]
    assert "labels of the periods" in note and "--keep-dimensions weather" in note
