"""`%load_ext investigator`, `%investigate` and `%%investigate` inside a real IPython shell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython import get_ipython
from IPython.testing.globalipapp import start_ipython

from investigator.front.notebook import Investigation
from investigator.run.state import load
from investigator.sources.synth import generate


@pytest.fixture(scope="module")
def shell() -> Any:
    # IPython's global test shell starts once per process and says None the second time: a worker
    # that runs this module's tests in two groups (`--dist worksteal`) asks twice
    ip = start_ipython() or get_ipython()
    assert ip is not None
    ip.run_line_magic("load_ext", "investigator")
    return ip


def test_line_magic_takes_the_cli_flags_and_a_dataframe_by_name(shell: Any, tmp_path: Path) -> None:
    frame, _ = generate("segment_change", seed=6, segment={"country": "FR"}, factor=0.4)
    shell.user_ns["sales"] = frame
    result = shell.run_cell(
        f"inv = %investigate --data sales --metric revenue --window 7d --runs-dir {tmp_path}"
    )
    assert result.success, result.error_in_exec
    inv = shell.user_ns["inv"]
    assert isinstance(inv, Investigation) and inv.root_causes[0].segment == {"country": "FR"}
    assert "<h2>Why did revenue move?</h2>" in inv._repr_html_()  # what Jupyter shows for the cell


def test_cell_magic_body_is_the_objective(shell: Any, tmp_path: Path) -> None:
    frame, _ = generate("rate_change", seed=4)
    path = tmp_path / "sales.parquet"
    frame.to_parquet(path)
    question = "Conversion fell last week: which segment lost it?"
    line = (
        f"--data {path} --metric orders/sessions --max-iterations 3 --sandbox inprocess --runs-dir {tmp_path}"
    )
    inv = shell.run_cell_magic("investigate", line, question + "\n")
    state = load(inv.folder)
    assert state.request.objective == question and state.request.data == str(path)
    assert inv.status == "partial" and "max_iterations (3)" in (inv.stop_reason or "")
    again = shell.run_line_magic("investigate", f"--runs-dir {tmp_path} resume {inv.run_id}")
    assert again.run_id == inv.run_id and again.conclusion == inv.conclusion


def test_bad_lines_print_what_to_do(shell: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert shell.run_line_magic("investigate", "--metric revenue --bogus 1") is None
    assert "No such option: --bogus" in capsys.readouterr().err
    assert shell.run_line_magic("investigate", "--window 7d") is None
    assert "metric is required" in capsys.readouterr().err
    assert shell.run_line_magic("investigate", "--metric revenue --baseline month") is None
    assert "baseline 'month' is not understood" in capsys.readouterr().err
    assert shell.run_line_magic("investigate", "--help") is None
    assert "--max-iterations" in capsys.readouterr().out
