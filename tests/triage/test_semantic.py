"""A triage config lists dbt semantic-layer metrics by name: the example project's manifest read
with the real library, each metric scanned as defined (its measure, its filter, its time column)
and compared with pandas by hand; the investigation is asked with the manifest."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest

from investigator.sources.demo import demo_path
from investigator.triage.config import TriageConfig
from investigator.triage.job import scan_all
from investigator.triage.runs import request_for
from investigator.triage.secrets import Redactor

pytest.importorskip("dbt_semantic_interfaces", reason="pip install -e '.[semantic]'")

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "dbt_demo"


def test_semantic_metrics_are_scanned_as_the_manifest_defines_them() -> None:
    config = TriageConfig.model_validate(
        {
            "data": str(demo_path()),
            "semantic_manifest": str(PROJECT),
            "window": "7d",
            "metrics": ["web_revenue", "conversion", "revenue"],
            "scan_segments": ["country"],
        }
    )
    targets = {t.metric: t for t in config.targets()}
    assert (
        targets["web_revenue"].filter == "platform = 'web'" and targets["web_revenue"].time_column == "date"
    )
    assert (
        targets["conversion"].expression == "sum(orders)/sum(sessions)"
        and targets["conversion"].filter is None
    )
    items = {(i.metric, tuple(i.segment.values())): i for i in scan_all(config, Redactor([]))}
    frame = pd.read_parquet(demo_path())
    dates = pd.to_datetime(frame["date"]).dt.date
    end = max(dates)
    week = frame[(dates > end - timedelta(days=7)) & (dates <= end)]
    web = week[week["platform"] == "web"]
    assert items[("web_revenue", ())].current == pytest.approx(web["revenue"].sum())
    country = web["country"].iloc[0]
    assert items[("web_revenue", (country,))].current == pytest.approx(
        web.loc[web["country"] == country, "revenue"].sum()
    )
    assert items[("conversion", ())].current == pytest.approx(
        week["orders"].sum() / week["sessions"].sum(), abs=1e-6
    )
    assert items[("revenue", ())].current == pytest.approx(week["revenue"].sum())


def test_a_semantic_metric_is_investigated_with_its_manifest() -> None:
    from investigator.triage.runs import Job

    config = TriageConfig.model_validate(
        {
            "data": str(demo_path()),
            "semantic_manifest": str(PROJECT),
            "window": "7d",
            "metrics": ["web_revenue"],
        }
    )
    [target] = config.targets()
    [item] = [i for i in scan_all(config, Redactor([])) if not i.segment]
    assert item.window_end is not None
    request = request_for(Job(item=item, target=target), config, item.window_end)
    assert request.semantic_manifest == str(PROJECT.resolve()) and request.filter == "platform = 'web'"


def test_an_unsupported_semantic_metric_is_a_config_error_naming_it() -> None:
    with pytest.raises(ValueError, match="cumulative_revenue"):
        TriageConfig.model_validate(
            {"data": str(demo_path()), "semantic_manifest": str(PROJECT), "metrics": ["cumulative_revenue"]}
        )
