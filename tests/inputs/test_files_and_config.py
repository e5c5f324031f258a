"""Bad files and surprising configuration: one line each, exit 2, nothing half-written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from investigator.config import MetricDefinition, load_settings
from investigator.errors import ConfigError, DataError, UserError
from investigator.request import Request, metric_definition
from investigator.sources.files import FileSource
from investigator.sources.frames import write_frame
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})},
    )  # fmt: skip


def test_an_empty_csv_and_a_header_only_csv_have_no_rows(tmp_path: Path) -> None:
    empty, header = tmp_path / "empty.csv", tmp_path / "header.csv"
    empty.write_text("")
    header.write_text("date,country,revenue\n")
    with pytest.raises(DataError, match="empty: it has no rows"):
        FileSource(empty).open("date")
    with pytest.raises(DataError, match="has no rows"):
        FileSource(header).open("date")


def test_a_dataframe_column_mixing_text_and_numbers_is_named_and_nothing_is_written(tmp_path: Path) -> None:
    frame = pd.DataFrame({"date": ["2026-03-01"] * 4, "revenue": [1.0, "n/a", 3, 4.5]})
    target = tmp_path / "run" / "data.parquet"
    with pytest.raises(DataError, match="column 'revenue' mixes text and numbers"):
        write_frame(frame, target)
    assert not target.exists() and not target.with_suffix(".partial").exists()
    assert write_frame(frame.assign(revenue=[1.0, 2.0, 3.0, 4.5]), target).exists()


def test_a_misspelt_metric_gets_did_you_mean_and_the_configured_metrics(tmp_path: Path) -> None:
    definition = metric_definition("revnue")
    data, _ = generate("no_change", seed=1, days=30)
    path = tmp_path / "d.parquet"
    data.to_parquet(path, index=False)
    with pytest.raises(DataError, match=r"did you mean 'revenue'\? Configured metrics: .*orders, revenue"):
        resolve(Request(metric="revnue"), path, definition)


def test_zero_iterations_is_said_in_the_tools_words() -> None:
    with pytest.raises(ConfigError) as e:
        load_settings(max_iterations=0)
    assert str(e.value) == "invalid settings: max_iterations must be at least 1 (got 0)"


@pytest.mark.parametrize("tolerance", [float("inf"), "nan"])
def test_a_verify_tolerance_that_is_no_number_is_refused(tolerance: float | str) -> None:
    """Regression (issue 25): an infinite tolerance would wave every claimed share through."""
    with pytest.raises(ConfigError, match="verify_tolerance input should be a finite number"):
        load_settings(verify_tolerance=tolerance)


def test_a_named_config_folder_that_does_not_exist_exits_2(tmp_path: Path) -> None:
    r = cli("--metric", "revenue", "--runs-dir", str(tmp_path / "runs"),
            env={"INVESTIGATOR_CONFIG_DIR": str(tmp_path / "nope")})  # fmt: skip
    assert r.returncode == 2 and "INVESTIGATOR_CONFIG_DIR" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "runs").exists()


def test_a_configured_metric_on_a_users_own_file_uses_the_files_columns(tmp_path: Path) -> None:
    frame, _ = generate("no_change", seed=1, dims={"region": ["n", "s"], "store": ["a", "b"]}, days=30)
    path = tmp_path / "own.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="revenue", data=str(path)), path, metric_definition("revenue"))
    assert spec.dimensions == ["region", "store"] and spec.numerator == "revenue"
    assert any("configured dimensions of revenue" in n for n in spec.notes)


def test_a_configured_metric_name_is_read_as_a_column_when_its_expression_is_absent(tmp_path: Path) -> None:
    frame, _ = generate("no_change", seed=1, dims={"region": ["n", "s"]}, days=30)
    frame = frame.rename(columns={"orders": "conversion"}).drop(columns="sessions")
    path = tmp_path / "own.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(Request(metric="conversion", data=str(path)), path, metric_definition("conversion"))
    assert (spec.numerator, spec.denominator) == ("conversion", None)


def test_a_dimension_given_twice_is_one_clear_line(tmp_path: Path) -> None:
    frame, _ = generate("no_change", seed=1, dims={"region": ["n", "s"]}, days=30)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(UserError, match="'region' given more than once"):
        resolve(Request(metric="sum(revenue)", dimensions=["region", "region"]), path,
                MetricDefinition(expression="revenue"))  # fmt: skip


@pytest.mark.parametrize("window", ["99999999999d", "999999d"])
def test_a_window_past_the_calendar_is_one_line(window: str, tmp_path: Path) -> None:
    frame, _ = generate("no_change", seed=1, dims={"region": ["n", "s"]}, days=30)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(UserError, match="reaches before year 1: pick a shorter --window"):
        resolve(Request(metric="sum(revenue)", window=window), path, MetricDefinition(expression="revenue"))


def test_a_csv_cut_off_mid_line_says_where(tmp_path: Path) -> None:
    frame, _ = generate("no_change", seed=1, days=30)
    text = frame.to_csv(index=False)
    cut = tmp_path / "cut.csv"
    cut.write_text(text[: len(text) // 2 + 7])
    lines = cut.read_text().count("\n") + 1
    with pytest.raises(DataError, match=rf"line {lines} has \d+ fields where the header has 8"):
        FileSource(cut).open("date")


def test_a_dataframe_with_a_mixed_metric_column_is_one_error_and_no_run_folder(tmp_path: Path) -> None:
    from investigator import investigate
    from investigator.errors import DataError
    from investigator.sources.synth import generate

    frame, _ = generate("no_change", seed=1)
    frame["revenue"] = frame["revenue"].astype(object)
    frame.loc[3, "revenue"] = "n/a"
    with pytest.raises(DataError, match="column 'revenue' mixes text and numbers"):
        investigate(frame, metric="revenue", runs_dir=tmp_path / "runs", quiet=True)
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []
