"""Metrics from dbt's semantic layer: the example project's manifest read with the real library
(dbt-semantic-interfaces), its simple, ratio and derived metrics investigated and checked against
pandas by hand, a derived product investigated as its driver tree, and what is not supported
refused in one line naming the metric."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.errors import UserError
from investigator.request import build_request
from investigator.runner import investigate
from investigator.semantic import semantic_metric
from investigator.sources.demo import demo_path

pytest.importorskip("dbt_semantic_interfaces", reason="pip install -e '.[semantic]'")

PROJECT = Path(__file__).resolve().parents[1] / "examples" / "dbt_demo"


@pytest.mark.parametrize(
    ("name", "expression", "filter"),
    [
        ("revenue", "sum(revenue)", None),
        ("web_revenue", "sum(revenue)", "platform = 'web'"),
        ("avg_row_revenue", "avg(revenue)", None),
        ("selling_countries", "count_distinct(country)", None),
        ("conversion", "sum(orders)/sum(sessions)", None),
        ("aov", "sum(revenue)/sum(orders)", None),
    ],
)
def test_the_projects_metrics_read_as_definitions(name: str, expression: str, filter: str | None) -> None:
    got = semantic_metric(PROJECT, name)
    assert got.definition.expression == expression and got.filter == filter
    assert got.definition.time_column == "date" and got.table == "sales"
    assert "platform" in (got.definition.dimensions or [])
    assert ("country" in (got.definition.dimensions or [])) == (name != "selling_countries")


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("cumulative_revenue", "cumulative metrics are not supported"),
        ("revenue_growth", "derived expression 'revenue - revenue_prev' is not supported"),
        ("sessions_times_aov", "reduces to sum[(]sessions[)] [*] sum[(]revenue[)] / sum[(]orders[)]"),
        ("biggest_sale", "aggregates with max, which is not supported"),
        ("nope", "is not in"),
    ],
)
def test_what_is_not_supported_is_refused_in_one_line(name: str, why: str) -> None:
    with pytest.raises(UserError, match=why) as e:
        semantic_metric(PROJECT / "target" / "semantic_manifest.json", name)
    assert name in str(e.value) and "\n" not in str(e.value)


def window(frame: pd.DataFrame, start: str, end: str) -> pd.DataFrame:
    dates = pd.to_datetime(frame["date"]).dt.date
    return frame[(dates >= pd.Timestamp(start).date()) & (dates <= pd.Timestamp(end).date())]


@pytest.mark.parametrize("name", ["web_revenue", "conversion", "aov"])
def test_a_semantic_metric_is_investigated_as_defined(name: str, tmp_path: Path) -> None:
    request = build_request(
        name, None, "7d", None, "previous", None, None, None, semantic_manifest=str(PROJECT)
    )
    report = investigate(request, load_settings(sandbox="inprocess", runs_dir=tmp_path))
    part = window(pd.read_parquet(demo_path()), str(report.window.start), str(report.window.end))
    expected = {
        "web_revenue": part.loc[part["platform"] == "web", "revenue"].sum(),
        "conversion": part["orders"].sum() / part["sessions"].sum(),
        "aov": part["revenue"].sum() / part["orders"].sum(),
    }[name]
    assert report.movement.current == pytest.approx(expected)
    assert report.metric.startswith(name)


def test_a_warehouse_reads_the_semantic_models_table(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "shop.ddb"
    con = duckdb.connect(str(db))
    con.execute(f"CREATE TABLE sales AS SELECT * FROM read_parquet('{demo_path()}')")
    con.close()
    request = build_request(
        "conversion",
        f"duckdb:///{db}",
        "7d",
        None,
        "previous",
        None,
        None,
        None,
        semantic_manifest=str(PROJECT),
    )
    assert request.table == "sales"
    report = investigate(request, load_settings(sandbox="inprocess", runs_dir=tmp_path))
    part = window(pd.read_parquet(demo_path()), str(report.window.start), str(report.window.end))
    assert report.movement.current == pytest.approx(part["orders"].sum() / part["sessions"].sum())


def test_a_derived_product_is_the_metric_it_reduces_to_with_its_driver_tree() -> None:
    got = semantic_metric(PROJECT, "revenue_drivers")
    # sessions x orders/sessions x revenue/orders: what is above and below cancels to revenue
    assert got.definition.expression == "sum(revenue)" and got.filter is None
    assert got.definition.drivers == "sessions * conversion * aov"


def test_a_derived_products_tree_is_split_over_the_manifests_own_metrics(tmp_path: Path) -> None:
    """The tree's nodes are looked up in the manifest, not in metrics.yaml: renamed here to names
    metrics.yaml does not have, the run still splits the change and names the driver that moved."""
    manifest = json.loads((PROJECT / "target" / "semantic_manifest.json").read_text())
    names = {"sessions": "visits", "conversion": "orders_per_visit", "aov": "basket"}
    for metric in manifest["metrics"]:
        metric["name"] = names.get(metric["name"], metric["name"])
        if metric["name"] == "revenue_drivers":
            metric["type_params"]["expr"] = "visits * orders_per_visit * basket"
            for ref in metric["type_params"]["metrics"]:
                ref["name"] = names[ref["name"]]
        if metric["name"] == "orders_per_visit":
            metric["type_params"]["denominator"]["name"] = "visits"
    path = tmp_path / "semantic_manifest.json"
    path.write_text(json.dumps(manifest))
    request = build_request(
        "revenue_drivers", None, "7d", None, "previous", None, None, None, semantic_manifest=str(path)
    )
    report = investigate(request, load_settings(sandbox="inprocess", runs_dir=tmp_path / "runs"))
    part = window(pd.read_parquet(demo_path()), str(report.window.start), str(report.window.end))
    assert report.movement.current == pytest.approx(part["revenue"].sum())
    drivers = [c for c in report.root_causes if c.kind == "driver_change"]
    assert [c.driver for c in drivers] == ["visits"], report.conclusion
    assert "visits fell" in report.conclusion and "orders_per_visit and basket held" in report.conclusion
