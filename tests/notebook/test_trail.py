"""The trail notebook: valid nbformat, one cell pair per step with the outputs the loop saw, and
"Run all" reproduces the report's key numbers."""

from __future__ import annotations

import base64
import json
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from investigator.front.notebook import Investigation
from investigator.report.trail import TRAIL_FILE, outputs_of
from investigator.run.state import load
from sandbox.models import ExecError, ExecResult


@pytest.fixture(scope="module")
def trail(run_folder: Path) -> nbformat.NotebookNode:
    nb = nbformat.read(run_folder / TRAIL_FILE, as_version=4)
    nbformat.validate(nb)
    return nb


def _stdout(cell: nbformat.NotebookNode) -> str:
    return "".join(
        o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout"
    )


def _payloads(text: str) -> list[dict]:
    """The JSON objects `emit` printed, in order."""
    out, decoder, i = [], json.JSONDecoder(), 0
    while (i := text.find("{", i)) != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i += 1
            continue
        out.append(obj)
        i = end
    return out


def test_one_markdown_and_one_code_cell_per_step(trail: nbformat.NotebookNode, run_folder: Path) -> None:
    state = load(run_folder)
    code = [c for c in trail.cells if c.cell_type == "code"]
    setup = code[0].source
    assert "DATA = Path('data.parquet').resolve()" in setup and "open_table(str(DATA)" in setup
    assert Path(state.data_path) == run_folder / "data.parquet"  # the DataFrame's copy, named relatively
    steps = [d for d in state.decisions if d.runs_code]
    assert [c.source for c in code[1 : 1 + len(steps)]] == [d.code for d in steps]
    headings = [c.source.splitlines()[0] for c in trail.cells if c.source.startswith("## Step")]
    steps_made = [f for f in state.findings if f.iteration > 0]
    assert headings == [
        f"## Step {f.iteration} · {f.decision}" + (f" · {f.hypothesis_id}" if f.hypothesis_id else "")
        for f in steps_made
    ]
    for finding, cell in zip([f for f in state.findings if f.output_file], code[1:], strict=False):
        saved = (run_folder / finding.output_file).read_text()  # type: ignore[operator]
        assert _stdout(cell).strip() and _stdout(cell).strip() in saved  # the output the loop saw


def test_run_all_reproduces_the_key_numbers(
    trail: nbformat.NotebookNode, run_folder: Path, planted_run: Investigation, tmp_path: Path
) -> None:
    moved = tmp_path / "elsewhere" / run_folder.name  # the folder travels whole: it replays where it lands
    shutil.copytree(run_folder, moved)
    nb = nbformat.from_dict(json.loads(json.dumps(trail)))
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(moved)}}
    ).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert errors == []
    movement = next(p for p in _payloads(_stdout(code[0])) if p.get("kind") == "movement")
    assert movement["current"] == pytest.approx(planted_run.movement.current)
    assert movement["baseline"] == pytest.approx(planted_run.movement.baseline)
    segments = next(p for c in code for p in _payloads(_stdout(c)) if p.get("kind") == "segments")
    assert segments["elements"][0]["segment"] == planted_run.root_causes[0].segment
    verification = next(p for p in _payloads(_stdout(code[-1])) if p.get("kind") == "verification")
    assert verification["ok"] is True


def test_saved_figures_come_back_as_images(tmp_path: Path) -> None:
    png = base64.b64decode(
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
    )
    (tmp_path / "figure_1.png").write_bytes(png)
    result = ExecResult(
        ok=False, stdout="hello\n", result="42", displays=["[image saved as figure_1.png]", "a table"],
        error=ExecError(name="ValueError", value="bad", traceback=["Traceback", "ValueError: bad"]),
    )  # fmt: skip
    outs = outputs_of(result, tmp_path, count=3)
    kinds = [o.output_type for o in outs]
    assert kinds == ["stream", "display_data", "display_data", "execute_result", "error"]
    assert base64.b64decode(outs[1].data["image/png"]) == png
    assert outs[2].data == {"text/plain": "a table"} and outs[3].execution_count == 3
    assert outs[4].ename == "ValueError"


def test_a_changed_input_stops_the_replay_with_one_line(
    trail: nbformat.NotebookNode, run_folder: Path, tmp_path: Path
) -> None:
    moved = tmp_path / run_folder.name
    shutil.copytree(run_folder, moved)
    data = moved / "data.parquet"
    data.write_bytes(data.read_bytes() + b"changed")
    setup = next(c for c in trail.cells if c.cell_type == "code")
    assert str(run_folder) not in setup.source  # no absolute path of the run folder
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(setup.source)])
    with pytest.raises(CellExecutionError, match="changed since the run read it"):
        NotebookClient(
            nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(moved)}}
        ).execute()
