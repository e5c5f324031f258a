"""The --json contract: versioned, published as a JSON Schema that the reports really follow."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema

from investigator.report.model import SCHEMA_VERSION, json_schema

from ..conftest import cli, write_synth


def test_the_published_schema_is_the_models() -> None:
    published = json.loads(resources.files("investigator.report").joinpath("report.schema.json").read_text())
    assert published == json.loads(json.dumps(json_schema())), (
        "regenerate investigator/report/report.schema.json from json_schema()"
    )


def test_a_report_follows_the_schema_and_says_what_produced_it(tmp_path: Path) -> None:
    data = write_synth(tmp_path, "segment_change", seed=4, segment={"channel": "email"}, factor=0.5)[0]
    r = cli("--data", str(data), "--metric", "revenue", "--window", "7d", "--json", "-",
            "--dimensions", "country,channel", "--runs-dir", str(tmp_path / "runs"))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    jsonschema.validate(report, json_schema())
    assert report["schema_version"] == SCHEMA_VERSION
    assert report["inputs"] == {
        "data": str(data), "table": None, "sql": None, "filter": None, "time_column": "date", "grain": "day",
        "dimensions": ["country", "channel"], "window": "7d", "baseline": "previous",
    }  # fmt: skip
    assert report["movement"]["z"] is not None and abs(report["movement"]["z"]) > 3
    assert report["baseline"]["kind"] == "previous" and report["baseline"]["scale"] == 1.0  # equal lengths
