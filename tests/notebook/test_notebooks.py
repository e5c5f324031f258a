"""Every notebook under notebooks/ runs headless from top to bottom without a cell error."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def execute(path: Path, cwd: Path) -> nbformat.NotebookNode:
    """Run a notebook as CI does (a cell error raises `CellExecutionError`); runs go under `cwd`.

    The kernel gets the environment a Jupyter server would give it: without PYTEST_CURRENT_TEST,
    which makes ipykernel leave stderr without a file descriptor."""
    nb = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}
    client = NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute(env=env)
    return nb


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[nbformat.NotebookNode, Path]]:
    """Each notebook executed once; a cell error fails here, naming the cell."""
    out = {}
    for path in NOTEBOOKS:
        cwd = tmp_path_factory.mktemp(path.stem)
        out[path.stem] = execute(path, cwd), cwd
    return out


@pytest.mark.parametrize("name", [p.stem for p in NOTEBOOKS])
def test_notebook_runs_without_errors(
    name: str, executed: dict[str, tuple[nbformat.NotebookNode, Path]]
) -> None:
    nb, _ = executed[name]
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]


def test_quickstart_shows_live_progress_and_the_html_report(
    executed: dict[str, tuple[nbformat.NotebookNode, Path]],
) -> None:
    nb, cwd = executed["quickstart"]
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    progress = [o for o in outputs if "inv-progress" in o.get("data", {}).get("text/html", "")]
    reports = [o for o in outputs if 'class="inv-report"' in o.get("data", {}).get("text/html", "")]
    assert len(progress) == 3 and len(reports) == 3  # two API calls and one %%investigate
    # each progress display was updated in place to its last state
    assert all(
        "done" in o["data"]["text/plain"] and "iteration 0/" not in o["data"]["text/plain"] for o in progress
    )
    assert all('id="chart-metric"' in o["data"]["text/html"] for o in reports)
    assert len(list((cwd / "runs").glob("*/investigation.ipynb"))) == 3
