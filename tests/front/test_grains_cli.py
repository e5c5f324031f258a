"""The command line on data that is not daily: weekly, monthly, yearly (integer years), 5-yearly.

Real public data of these shapes used to end "explained by a data problem (missing_data)" because
every month looked like 29 missing days; these runs must measure the movement in whole periods and
find a data problem only where one was planted. The planted missing month and the refusal go through
the real command; the other runs take the same flags through its wiring (`flags.ask`) in this process.
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from investigator.config import MetricDefinition
from investigator.front.flags import ask
from investigator.request import Request
from investigator.run.kernel_code import setup_code
from investigator.runner import investigate
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate_shaped

from ..conftest import cli


def shaped(folder: Path, shape: str, **kw: Any) -> tuple[Path, dict[str, Any]]:
    frame, truth = generate_shaped(shape, **kw)
    path = folder / f"{truth['scenario']}.parquet"
    frame.to_parquet(path, index=False)
    return path, truth


def run(tmp_path: Path, path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "report.json"
    r = cli("--data", str(path), "--metric", "value", *args,
            "--runs-dir", str(tmp_path / "runs"), "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    report: dict[str, Any] = json.loads(out.read_text())
    return report


def run_in_process(tmp_path: Path, path: Path, *args: str) -> dict[str, Any]:
    """`run`'s flags through the command line's own wiring (`flags.ask`) and the runner in this
    process: what is checked here is how the flags and the data's grain are read, not the process."""
    flags = dict(zip(args[::2], args[1::2], strict=True))
    assert all(k.startswith("--") for k in flags), args
    kwargs = {k[2:].replace("-", "_"): v for k, v in flags.items()}
    asked = ask(metric="value", data=str(path), runs_dir=tmp_path / "runs", sandbox="inprocess", flag="--",
                **kwargs)  # fmt: skip
    report = investigate(asked.request, asked.settings, llm=asked.llm)
    out: dict[str, Any] = report.model_dump(mode="json")
    return out


def no_data_problem(report: dict[str, Any]) -> None:
    assert all(c["kind"] != "data_quality" for c in report["root_causes"]), report["root_causes"]
    assert "data problem" not in report["conclusion"]
    assert "missing_data" not in json.dumps(report["root_causes"])


CLEAN = {
    "monthly, --end inside the month": (
        "monthly", ["--window", "1mo", "--end", "2024-03-15"],
        {"start": "2024-03-01", "end": "2024-03-31"}, {"start": "2024-02-01", "end": "2024-02-29"},
    ),
    "weekly on Mondays, default window": (
        "weekly", [],
        {"start": "2024-03-25", "end": "2024-03-31"}, {"start": "2024-03-18", "end": "2024-03-24"},
    ),
    "yearly integer years, yoy": (
        "yearly", ["--time-column", "year", "--window", "1y", "--baseline", "yoy"],
        {"start": "2023-01-01", "end": "2023-12-31"}, {"start": "2022-01-01", "end": "2022-12-31"},
    ),
    "5-yearly integer years": (
        "5-yearly", ["--time-column", "year", "--window", "5y", "--end", "2020"],
        {"start": "2020-01-01", "end": "2024-12-31"}, {"start": "2015-01-01", "end": "2019-12-31"},
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CLEAN))
def test_nothing_wrong_is_no_data_problem(case: str, tmp_path: Path) -> None:
    shape, args, window, baseline = CLEAN[case]
    path, _ = shaped(tmp_path, shape, seed=21, null_share=0.05)
    report = run_in_process(tmp_path, path, *args)
    assert report["window"] == window
    assert {k: report["baseline"][k] for k in ("start", "end")} == baseline
    no_data_problem(report)
    assert abs(report["movement"]["change_pct"]) < 0.15  # per-period totals, not per-day sums
    assert report["movement"]["current"] > 1000  # a period's total, not a per-day mean near zero


def test_default_window_on_monthly_data_names_the_grain(tmp_path: Path) -> None:
    path, _ = shaped(tmp_path, "monthly", seed=21)
    r = cli("--data", str(path), "--metric", "value", "--runs-dir", str(tmp_path / "runs"))
    assert r.returncode == 2, (r.stdout, r.stderr)
    message = " ".join(r.stderr.split())
    assert "the data is monthly: try --window 1mo" in message
    assert "--end" not in message and "Traceback" not in r.stderr


def test_a_planted_missing_month_is_found(tmp_path: Path) -> None:
    path, _ = shaped(tmp_path, "monthly", seed=22, window=3, plant="missing_period")
    report = run(tmp_path, path, "--window", "3mo")
    top = report["root_causes"][0]
    assert (top["kind"], top["detail"], top["segment"]) == ("data_quality", "missing_data", {})
    assert 0.5 <= top["contribution"] <= 1.0
    assert "1 month of the current window (2024-02)" in top["evidence"]


def test_a_relabelled_category_is_reported_with_both_names(tmp_path: Path) -> None:
    path, _ = shaped(tmp_path, "monthly", seed=23, plant="relabel")
    report = run_in_process(tmp_path, path, "--window", "1mo")
    text = json.dumps(report["findings"])
    assert "relabelled" in text and "industry=retail stops after 2024-02" in text
    assert "industry=retail trade starts in 2024-03" in text
    no_data_problem(report)


def test_kernel_setup_counts_the_data_s_periods(tmp_path: Path) -> None:
    path, _ = shaped(tmp_path, "monthly", seed=24)
    spec, _ = resolve(Request(metric="value", window="1mo"), path, MetricDefinition(expression="value"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(setup_code(spec, str(path)), {})
    assert out.getvalue().startswith("loaded 96 months of value")
