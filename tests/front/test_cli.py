"""The command line, as a user runs it: real kernel, real files, exit codes and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from ..conftest import cli, write_synth


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    return write_synth(
        tmp_path_factory.mktemp("d"), "segment_change", seed=11, segment={"country": "DE"}, factor=0.5
    )


def test_main_job_finds_the_planted_cause(data: tuple[Path, dict], tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    r = cli("--data", str(data[0]), "--metric", "revenue", "--window", "7d",
            "--runs-dir", str(tmp_path / "runs"), "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    assert report["root_causes"][0]["kind"] == "segment_change"
    assert report["root_causes"][0]["segment"] == {"country": "DE"}
    assert report["movement"]["change_pct"] < -0.03 and report["movement"]["significant"] is True
    assert report["window"] == {"start": "2026-03-23", "end": "2026-03-29"}
    baseline = {"start": "2026-03-16", "end": "2026-03-22", "kind": "previous", "scale": 1.0}
    assert report["baseline"] == baseline
    statuses = {h["id"]: h["status"] for h in report["hypotheses"]}
    # 120 days of history: no comparable period a year back, so seasonality cannot be tested
    assert statuses == {"H1": "RULED_OUT", "H2": "NOT_TESTABLE", "H3": "CONFIRMED", "H4": "RULED_OUT",
                        "H5": "CONFIRMED"}  # fmt: skip
    assert report["stats"]["planner"] == "offline"
    run = tmp_path / "runs" / report["run_id"]
    assert (run / "report.md").read_text().startswith("# Why did revenue move?")
    assert json.loads((run / "report.json").read_text())["conclusion"] == report["conclusion"]
    outputs = sorted((run / "outputs").iterdir())
    assert outputs and "kind" in outputs[0].read_text()  # full outputs kept on disk
    assert "country=DE" in r.stdout


def test_quiet_prints_only_the_conclusion(data: tuple[Path, dict], tmp_path: Path) -> None:
    r = cli("--data", str(data[0]), "--metric", "revenue", "--quiet", "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    lines = [line for line in r.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and "country=DE" in lines[0]


def test_ratio_metric_and_wow_baseline_flags(data: tuple[Path, dict], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = cli("--data", str(data[0]), "--metric", "revenue/orders", "--window", "1w", "--baseline", "wow",
            "--end", "2026-03-22", "--dimensions", "country,platform", "--json", str(out),
            "--runs-dir", str(tmp_path))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report = json.loads(out.read_text())
    assert report["window"] == {"start": "2026-03-16", "end": "2026-03-22"}
    assert report["baseline"]["start"] == "2026-03-09"
    assert any(h["statement"].startswith("The ratio moved because") for h in report["hypotheses"])


BAD_INPUTS = {
    "missing metric column": (["--metric", "profit"], "metric column 'profit' not found; columns are: date"),
    "non-numeric metric": (["--metric", "country"], "holds string, not numbers"),
    "window after the data": (["--metric", "revenue", "--end", "2031-01-01"], "after the data"),
    "baseline before the data": (
        ["--metric", "revenue", "--end", "2025-12-05"],
        "baseline starts 2025-11-22, before",
    ),
    "yoy baseline before the data": (["--metric", "revenue", "--baseline", "yoy"], "yoy baseline starts"),
    "missing dimension": (
        ["--metric", "revenue", "--dimensions", "country,planet"],
        "dimension(s) 'planet' not found",
    ),
    "bad window": (["--metric", "revenue", "--window", "seven"], "window 'seven' is not understood"),
    "bad baseline": (["--metric", "revenue", "--baseline", "lastyear"], "'lastyear' is not understood"),
    "bad end": (["--metric", "revenue", "--end", "yesterday"], "is not a date"),
    "bad ratio": (["--metric", "revenue/"], "is not a column or a ratio"),
    "max measure": (["--metric", "max(revenue)"], "not supported: a maximum is one row's value"),
    "median measure": (["--metric", "median(revenue)"], "try avg(revenue)"),
    "missing time column": (["--metric", "revenue", "--time-column", "day"], "time column 'day' not found"),
    "no metric": ([], "--metric is required"),
    "unknown flag": (["--metric", "revenue", "--colour", "red"], "No such option"),
    "bad sandbox": (["--metric", "revenue", "--sandbox", "cloud"], "invalid settings: sandbox"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_exits_2_with_one_clear_message(case: str, data: tuple[Path, dict], tmp_path: Path) -> None:
    args, message = BAD_INPUTS[case]
    r = cli("--data", str(data[0]), *args, "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert message in " ".join(r.stderr.split()), r.stderr
    assert "Traceback" not in r.stderr + r.stdout
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_empty_window_inside_the_data(data: tuple[Path, dict], tmp_path: Path) -> None:
    frame = pd.read_parquet(data[0])
    gap = pd.to_datetime(frame["date"]).between("2026-03-10", "2026-03-16")
    holed = tmp_path / "holed.parquet"
    frame[~gap].to_parquet(holed)
    r = cli("--data", str(holed), "--metric", "revenue", "--end", "2026-03-16", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "no rows in the window 2026-03-10 to 2026-03-16" in r.stderr


def test_unreadable_and_missing_files(tmp_path: Path) -> None:
    junk = tmp_path / "sales.parquet"
    junk.write_bytes(b"this is not parquet at all")
    r = cli("--data", str(junk), "--metric", "revenue", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "cannot read" in r.stderr and "Traceback" not in r.stderr
    r = cli("--data", str(tmp_path / "nope.csv"), "--metric", "revenue", "--runs-dir", str(tmp_path))
    assert r.returncode == 2 and "does not exist" in r.stderr


def test_csv_with_string_dates(data: tuple[Path, dict], tmp_path: Path) -> None:
    csv = tmp_path / "sales.csv"
    frame = pd.read_parquet(data[0])
    frame["date"] = frame["date"].astype(str)
    frame.to_csv(csv, index=False)
    out = tmp_path / "r.json"
    r = cli("--data", str(csv), "--metric", "revenue", "--json", str(out), "--runs-dir", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["root_causes"][0]["segment"] == {"country": "DE"}


def test_malformed_config_is_a_user_error(data: tuple[Path, dict], tmp_path: Path) -> None:
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "investigator.yaml").write_text("max_iterations: [oops\n")
    r = cli("--data", str(data[0]), "--metric", "revenue", env={"INVESTIGATOR_CONFIG_DIR": str(conf)})
    assert r.returncode == 2 and "not valid YAML" in r.stderr and "Traceback" not in r.stderr
    (conf / "investigator.yaml").write_text("max_iterations: -3\n")
    r = cli("--data", str(data[0]), "--metric", "revenue", env={"INVESTIGATOR_CONFIG_DIR": str(conf)})
    assert r.returncode == 2 and "max_iterations" in r.stderr
    (conf / "investigator.yaml").write_text("")
    (conf / "metrics.yaml").write_text("metrics:\n  gmv: {expresion: revenue}\n")
    r = cli("--data", str(data[0]), "--metric", "gmv", env={"INVESTIGATOR_CONFIG_DIR": str(conf)})
    assert r.returncode == 2 and "metric 'gmv' is malformed" in r.stderr


def test_env_overrides_config(data: tuple[Path, dict], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    r = cli("--data", str(data[0]), "--metric", "revenue", "--json", str(out), "--runs-dir", str(tmp_path),
            env={"INVESTIGATOR_MAX_ITERATIONS": "3"})  # fmt: skip
    assert r.returncode == 3, r.stderr  # cut short at the limit: a partial conclusion
    report = json.loads(out.read_text())
    assert report["status"] == "partial" and report["stats"]["iterations"] == 3


def test_resume_unknown_run_is_a_user_error(tmp_path: Path) -> None:
    r = cli("--runs-dir", str(tmp_path), "resume", "20990101-000000-abcdef")
    assert r.returncode == 2 and "no run" in r.stderr


def test_ctrl_c_names_the_run_to_resume(data: tuple[Path, dict], tmp_path: Path) -> None:
    """Interrupted while it waits for a model that never answers: exit 130, and the message names
    the saved run (it used to print a placeholder)."""
    import signal
    import socket

    silent = socket.create_server(("127.0.0.1", 0))
    silent.settimeout(120)
    endpoint = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
    run = subprocess.Popen(
        [sys.executable, "-m", "investigator", "--data", str(data[0]), "--metric", "revenue",
         "--runs-dir", str(tmp_path / "runs"), "--planner", "llm", "--model", "m", "--sandbox", "local"],
        env={**os.environ, "OPENAI_BASE_URL": endpoint, "OPENAI_API_KEY": "sk-x"},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        asked, _ = silent.accept()  # the run waits for the model
        run.send_signal(signal.SIGINT)
        _, err = run.communicate(timeout=180)  # a loaded 2-core machine stops the kernel slowly
    finally:
        silent.close()
        if run.poll() is None:  # a failure here must not leave a process for the next test to meet
            run.kill()
            run.communicate()
    (folder,) = (tmp_path / "runs").iterdir()
    assert run.returncode == 130
    assert f"investigate resume {folder.name}" in err
    assert (folder / "state.json").is_file()
    asked.close()


def test_a_job_that_calls_the_venvs_command_unactivated(data: tuple[Path, dict], tmp_path: Path) -> None:
    """As cron runs `.venv/bin/investigate` (docs/triage.md): PATH holds no venv, yet the kernel must be
    this interpreter (behind `unshare`, a bare "python" was looked up on PATH: another Python)."""
    command = Path(sys.executable).parent / "investigate"
    if not command.is_file():
        pytest.skip(f"no {command}: the package is not installed into this interpreter's environment")
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"} | {"PATH": "/usr/bin:/bin"}
    out = tmp_path / "report.json"
    r = subprocess.run(
        [str(command), "--data", str(data[0]), "--metric", "revenue", "--runs-dir", str(tmp_path / "runs"),
         "--json", str(out), "--quiet"],
        capture_output=True, text=True, timeout=300, env={**env, "INVESTIGATOR_WARM": "0"},
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["root_causes"][0]["segment"] == {"country": "DE"}
    assert "Traceback" not in r.stderr
