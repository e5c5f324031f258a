"""`--filter` end to end: the run answers on the filtered rows, in the kernel, the host's check,
the warehouse extract and a resumed run alike; a filter that is not one is exit 2, before any run."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.front.flags import ask
from investigator.request import build_request
from investigator.runner import investigate
from tests.conftest import cli, write_synth

CURRENT = (date(2026, 3, 23), date(2026, 3, 29))
BASELINE = (date(2026, 3, 16), date(2026, 3, 22))


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Revenue that fell in country=DE & channel=social only (to 30%): the whole metric barely moved."""
    path, _ = write_synth(
        tmp_path_factory.mktemp("d"), "segment_change", seed=11,
        segment={"country": "DE", "channel": "social"}, factor=0.3,
    )  # fmt: skip
    return path


def window_sum(frame: pd.DataFrame, span: tuple[date, date]) -> float:
    days = pd.to_datetime(frame["date"]).dt.date
    return float(frame.loc[(days >= span[0]) & (days <= span[1]), "revenue"].sum())


def change(frame: pd.DataFrame) -> float:
    return window_sum(frame, CURRENT) - window_sum(frame, BASELINE)


def test_a_segment_filter_answers_on_its_rows_in_the_kernel_and_the_host(data: Path, tmp_path: Path) -> None:
    out = tmp_path / "de.json"
    r = cli("--data", str(data), "--metric", "revenue", "--filter", "country=DE",
            "--runs-dir", str(tmp_path / "runs"), "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    frame = pd.read_parquet(data)
    de = frame[frame["country"] == "DE"]
    # the movement is the kernel's (iteration 0): DE's revenue, not the whole metric's
    assert report["movement"]["current"] == pytest.approx(window_sum(de, CURRENT))
    assert report["movement"]["baseline"] == pytest.approx(window_sum(de, BASELINE))
    assert report["movement"]["significant"] is True
    cause = report["root_causes"][0]
    assert cause["segment"] == {"channel": "social"} and cause["verified"] is True  # the host agreed
    share = change(de[de["channel"] == "social"]) / change(de)
    assert cause["contribution"] == pytest.approx(share, abs=0.001)
    assert report["inputs"]["filter"] == "country=DE"
    assert "country" not in report["inputs"]["dimensions"]  # one value left: nothing to localize
    assert report["metric"] == "revenue [country = DE]"  # the headline names the rows
    assert any(n.startswith("Filtered: only rows where country = DE") for n in report["notes"])
    trail = (tmp_path / "runs" / report["run_id"] / "investigation.ipynb").read_text()
    assert "where=spec.filter" in trail  # "Run all" replays on the same rows


def test_the_drop_is_absent_when_filtering_another_segment(data: Path, tmp_path: Path) -> None:
    """The same flags as above through the command line's wiring (`flags.ask`), in this process."""
    asked = ask(metric="revenue", data=str(data), filter="country=US", runs_dir=tmp_path / "runs", flag="--")
    report = investigate(asked.request, asked.settings, llm=asked.llm).model_dump(mode="json")
    us = pd.read_parquet(data).query("country == 'US'")
    assert report["movement"]["current"] == pytest.approx(window_sum(us, CURRENT))
    assert report["movement"]["significant"] is False
    assert [c["kind"] for c in report["root_causes"]] == ["no_change"]


def test_a_sql_filter_through_the_api(data: Path, tmp_path: Path) -> None:
    from investigator.front.notebook import investigate as api

    frame = pd.read_parquet(data)
    inv = api(frame, "revenue", filter="country = 'DE' AND platform <> 'ios'", runs_dir=tmp_path, quiet=True)
    kept = frame[(frame["country"] == "DE") & (frame["platform"] != "ios")]
    assert inv.movement.current == pytest.approx(window_sum(kept, CURRENT))
    assert inv.root_causes[0].segment == {"channel": "social"} and inv.root_causes[0].verified is True
    assert inv.inputs is not None and inv.inputs.filter == "country = 'DE' AND platform <> 'ios'"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("1=1; drop table x", "holds 2 statements"),
        ("country IN (SELECT name FROM secrets)", "holds a subquery"),
        ("contry=DE", "did you mean 'country'?"),
        ("country=de", "matches no rows; country holds BR, CA, DE"),
    ],
)
def test_a_bad_filter_is_one_line_and_exit_2_before_any_run(
    data: Path, tmp_path: Path, text: str, said: str
) -> None:
    runs = tmp_path / "runs"
    r = cli("--data", str(data), "--metric", "revenue", "--filter", text, "--runs-dir", str(runs))
    assert r.returncode == 2, r.stderr
    assert said in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert not runs.exists() or not any(runs.iterdir())


@pytest.mark.long
def test_resume_keeps_the_filter(data: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    first = cli("--data", str(data), "--metric", "revenue", "--filter", "country=DE", "--max-iterations", "1",
                "--runs-dir", str(runs), "--json", str(tmp_path / "a.json"))  # fmt: skip
    assert first.returncode == 3, first.stderr
    run_id = json.loads((tmp_path / "a.json").read_text())["run_id"]
    done = cli("resume", run_id, "--more", "8", "--runs-dir", str(runs), "--json", str(tmp_path / "b.json"))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "b.json").read_text())
    de = pd.read_parquet(data).query("country == 'DE'")
    assert report["inputs"]["filter"] == "country=DE"
    assert report["movement"]["current"] == pytest.approx(window_sum(de, CURRENT))
    assert report["root_causes"][0]["segment"] == {"channel": "social"}
    assert report["root_causes"][0]["verified"] is True  # the resumed kernel and the host: DE's rows


def test_a_warehouse_extract_holds_the_filtered_rows(data: Path, tmp_path: Path) -> None:
    from tests.sources.conftest import load_duckdb

    load_duckdb(tmp_path / "shop.ddb", "sales", data)
    settings = load_settings(sandbox="inprocess", runs_dir=tmp_path / "runs")
    ask = build_request("revenue", f"duckdb:///{tmp_path / 'shop.ddb'}", "7d", None, "previous", None, None,
                        None, table="sales", filter="country = 'DE' OR country = 'FR'")  # fmt: skip
    report = investigate(ask, settings)
    frame = pd.read_parquet(data)
    kept = frame[frame["country"].isin(["DE", "FR"])]
    assert report.movement.current == pytest.approx(window_sum(kept, CURRENT))
    extract = pd.read_parquet(tmp_path / "runs" / report.run_id / "extract.parquet")
    assert set(extract["country"]) == {"DE", "FR"}
    assert report.root_causes[0].segment == {"country": "DE", "channel": "social"}
    assert report.root_causes[0].verified is True


def test_the_magic_takes_the_flag() -> None:
    from investigator.front.magics import parse

    assert parse("--metric revenue --filter country=DE")[1]["filter"] == "country=DE"
