"""The MCP server's owner names a dbt semantic manifest (`investigate mcp --semantic-manifest`);
clients ask for its metrics by name and never name a file. A manifest the server cannot read
stops it at start with one line."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
from mcp import Client
from typer.testing import CliRunner

from investigator.front.cli import app
from investigator.front.mcp_server import build_server
from investigator.front.mcp_tools import Place, semantic_catalogue
from investigator.sources.demo import demo_path

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "dbt_demo"


def test_a_manifest_the_server_cannot_read_stops_it_with_one_line(tmp_path: Path) -> None:
    out = CliRunner().invoke(app, ["mcp", "--semantic-manifest", str(tmp_path / "nowhere.json")])
    assert out.exit_code == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --semantic-manifest:"), out.stderr


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_a_client_asks_for_a_semantic_metric_by_name(tmp_path: Path) -> None:
    pytest.importorskip("dbt_semantic_interfaces", reason="pip install -e '.[semantic]'")
    place = Place(
        runs_dir=tmp_path / "runs", home=tmp_path / "home", semantic_manifest=PROJECT,
        semantic_metrics=semantic_catalogue(PROJECT),
    )  # fmt: skip
    assert "web_revenue" in place.semantic_metrics
    server, jobs = build_server(place)
    async with Client(server) as client:
        result = await client.call_tool(
            "investigate", {"data": str(demo_path()), "metric": "web_revenue", "window": "7d"}
        )
        named = await client.call_tool(
            "investigate", {"metric": "web_revenue", "semantic_manifest": "x.json"}
        )
    jobs.stop_all(60.0)
    assert not result.is_error, result.content
    report = result.structured_content
    assert report is not None
    frame = pd.read_parquet(demo_path())
    dates = pd.to_datetime(frame["date"]).dt.date
    week = frame[(dates > max(dates) - timedelta(days=7)) & (frame["platform"] == "web")]
    assert report["movement"]["current"] == pytest.approx(week["revenue"].sum())  # the metric's filter held
    # a client never names a manifest (a file on the server): its argument is not read
    assert not named.is_error and named.structured_content is not None
    assert named.structured_content["movement"]["current"] == pytest.approx(week["revenue"].sum())
