"""The trail as a notebook: `runs/<run_id>/investigation.ipynb`, one markdown cell and one code cell
per step, so "Run all" replays the analysis.

Code cells carry the outputs the loop really saw, converted from the saved `outputs/iter_NNN.json`
(stdout, stderr, results, errors, and figures from the PNGs the kernel saved in the workspace).
Nothing is re-executed to write it: it costs milliseconds, and code an LLM wrote is never run
outside the sandbox it was given.
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
from pathlib import Path

from investigator.files import write_atomic
from investigator.fmt import md, seg
from investigator.report import ipynb
from investigator.report.ipynb import NotebookNode
from investigator.run.decision import Decision
from investigator.run.kernel_code import setup_code, verify_code
from investigator.run.state import Finding, RunState
from sandbox.models import ExecResult

TRAIL_FILE = "investigation.ipynb"
_IMAGE = re.compile(r"^\[image saved as (?P<name>[^\]]+)\]$")
PREAMBLE = """\
import os
from pathlib import Path

# Paths are relative to the run folder, where Jupyter starts this notebook: move or copy the folder
# and the trail still replays. DATA is the run's input; point it elsewhere if the file moved.
DATA = Path({data!r}).resolve()
if not DATA.is_file():
    raise FileNotFoundError(f"the run's input {{DATA}} is not there: put it back, or set DATA to where it is")
{check}os.makedirs("workspace", exist_ok=True)
os.chdir("workspace")  # the run's workspace: files the steps wrote or read are here
"""
CHECK = """\
from investigator.run.guard import fingerprint

if getattr(fingerprint(DATA), "sha256", None) != {sha!r}:
    raise ValueError(f"{{DATA}} changed since the run read it: the outputs below are from an earlier version")
"""
_MARK = "__the_run_input__"


def notebook(state: RunState, folder: Path, verify_tolerance: float = 0.25) -> NotebookNode:
    """The run's trail as a notebook (not written)."""
    nb = ipynb.new(
        {
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"},
            "language_info": {"name": "python"},
            "investigator": {"run_id": state.run_id, "status": state.status},
        }
    )
    nb.cells = [ipynb.markdown_cell(_intro(state)), *_setup(state, folder)]
    count = 1
    for finding in (f for f in state.findings if f.iteration > 0):
        decision = (
            state.decisions[finding.iteration - 1] if finding.iteration <= len(state.decisions) else None
        )
        nb.cells.append(ipynb.markdown_cell(_step_text(state, finding, decision)))
        if decision is not None and decision.runs_code:
            count += 1
            outputs = _outputs(folder, finding, count)
            nb.cells.append(
                ipynb.code_cell(
                    decision.code or "", execution_count=count if outputs else None, outputs=outputs
                )
            )
    if state.conclusion and state.conclusion.root_causes:
        nb.cells.append(
            ipynb.markdown_cell("### Check the claimed causes\nRecomputes every root cause from the data.")
        )
        nb.cells.append(ipynb.code_cell(verify_code(state.conclusion.root_causes, verify_tolerance)))
    return nb


def write(state: RunState, folder: Path, verify_tolerance: float = 0.25) -> Path:
    return write_atomic(folder / TRAIL_FILE, ipynb.text(notebook(state, folder, verify_tolerance)))


def _data_ref(data: Path, folder: Path) -> str:
    """The input as the notebook names it: relative when it lives in the run folder (a DataFrame's
    copy, a warehouse extract), so the folder travels whole; else where the run read it."""
    try:
        return str(data.resolve().relative_to(folder.resolve()))
    except ValueError:
        return str(data)


# cells -------------------------------------------------------------------------------------------
def _intro(state: RunState) -> str:
    s, r = state.spec, state.request
    lines = [
        f"# Why did {md(s.metric)} move? — the investigation trail",
        "",
        f"Run `{state.run_id}` ({state.status}, planner {state.planner}): window {s.current.start} to "
        f"{s.current.end} vs the {s.baseline_kind} baseline {s.baseline.start} to {s.baseline.end}"
        f"{f' (compared {s.baseline_words})' if s.baseline_words else ''}; "
        f"dimensions {md(', '.join(s.dimensions)) or 'none'}.",
    ]
    if r.objective:
        lines += ["", f"> {md(r.objective)}"]
    c = state.conclusion
    if c and c.conclusion:
        lines += ["", f"**Conclusion ({c.confidence or 'low'} confidence):** {md(c.conclusion)}"]
    lines += [
        "",
        "Each step below is the planner's decision and reasoning, then the code it ran with the output "
        "it saw. *Run All* replays the analysis on the same data.",
    ]
    if state.planner != "offline":
        lines += [
            "",
            f"**Caution:** the code below was written by the {state.planner} planner and ran in the "
            "sandbox. *Run All* runs it in this notebook's kernel, with your environment: read it first.",
        ]
    return "\n".join(lines)


def _setup(state: RunState, folder: Path) -> list[NotebookNode]:
    data = _data_ref(Path(state.data_path), folder)
    check = CHECK.format(sha=state.fingerprint.sha256) if state.fingerprint else ""
    load = setup_code(state.spec, _MARK).replace(repr(_MARK), "str(DATA)")
    code = PREAMBLE.format(data=data, check=check) + load
    first = state.findings[0].summary if state.findings and state.findings[0].iteration == 0 else ""
    text = f"## Setup\nLoads {md(data)} into `table`, `daily`, `history`, `cube` and `spec`. {md(first)}"
    return [ipynb.markdown_cell(text.strip()), ipynb.code_cell(code.rstrip())]


def _step_text(state: RunState, finding: Finding, decision: Decision | None) -> str:
    hyp = next((h for h in state.hypotheses if h.id == finding.hypothesis_id), None)
    lines = [
        f"## Step {finding.iteration} · {finding.decision}" + (f" · {finding.hypothesis_id}" if hyp else "")
    ]
    if hyp is not None:
        lines.append(f"**Hypothesis {hyp.id}:** {md(hyp.statement)} *(now {hyp.status})*")
    if decision is not None and decision.rationale:
        lines.append(f"**Why:** {md(decision.rationale)}")
    lines.append(f"**Finding{' (the code failed)' if finding.error else ''}:** {md(finding.summary)}")
    if decision is not None and decision.root_causes:
        causes = decision.root_causes
        lines.append("\n".join(f"- {c.kind} {md(seg(c.segment))}: {md(c.evidence)}" for c in causes))
    return "\n\n".join(lines)


# outputs -----------------------------------------------------------------------------------------
def _outputs(folder: Path, finding: Finding, count: int) -> list[NotebookNode]:
    if not finding.output_file:
        return []
    saved = (folder / finding.output_file).with_suffix(".json")
    if not saved.exists():
        return []
    return outputs_of(ExecResult.model_validate(json.loads(saved.read_text())), folder / "workspace", count)


def outputs_of(result: ExecResult, workspace: Path, count: int) -> list[NotebookNode]:
    """nbformat outputs for one saved execution; figures come back from the PNGs in the workspace."""
    outs: list[NotebookNode] = []
    if result.stdout:
        outs.append(ipynb.stream("stdout", result.stdout))
    for shown in result.displays:
        outs.append(_display(shown, workspace))
    if result.result is not None:
        outs.append(ipynb.result({"text/plain": result.result}, count))
    notes = [result.stderr] if result.stderr else []
    if result.timed_out:
        notes.append("[execution timed out and was interrupted]\n")
    if result.restarted:
        notes.append("[the kernel died and was restarted]\n")
    if notes:
        outs.append(ipynb.stream("stderr", "".join(notes)))
    if result.error is not None:
        e = result.error
        outs.append(ipynb.error(e.name, e.value, e.traceback or [f"{e.name}: {e.value}"]))
    return outs


def _display(shown: str, workspace: Path) -> NotebookNode:
    m = _IMAGE.match(shown.strip())
    if m is None:
        return ipynb.display({"text/plain": shown})
    raw = read_workspace_file(workspace, m.group("name"))
    if raw is None:  # the kernel named something that is not its own figure: never read it
        note = f"[image not included: {m.group('name')!r} is not a file inside the run's workspace]"
        return ipynb.display({"text/plain": note})
    return ipynb.display({"image/png": base64.b64encode(raw).decode("ascii"), "text/plain": "<Figure>"})


def read_workspace_file(workspace: Path, name: str, limit: int = 32 * 2**20) -> bytes | None:
    """The bytes of a regular file the kernel named, or None when the name leaves the workspace:
    an absolute path, `..`, or a symbolic link anywhere on the way (the kernel can plant links, and
    the host must never read through one)."""
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or any(p in ("..", "") for p in parts):
        return None
    try:
        fd = os.open(workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        for part in parts[:-1]:  # walk down without following a link at any step
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
        leaf = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    except OSError:
        os.close(fd)
        return None
    os.close(fd)
    if not stat.S_ISREG(os.fstat(leaf).st_mode):
        os.close(leaf)
        return None
    with os.fdopen(leaf, "rb") as f:
        data = f.read(limit + 1)
    return data if len(data) <= limit else None
