"""The README's commands, run as a reader would run them, and its printed output checked against
what a run prints. A command added to the README without a run here fails
`test_every_command_in_the_readme_is_run_by_a_test`; an example whose output drifted fails the
test that runs it. The two set-up commands are what CI runs (`.ci/run`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from investigator.sources.demo import demo_path
from investigator.sources.synth import generate, generate_shaped

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
EXE = Path(sys.executable).parent / "investigate"

# every command line the README shows in a code block -> where it is run
RUN_BY = {
    "pip install -e . && investigate --metric revenue --window 7d": ".ci/run and the main job below",
    'pip install -e ".[dev]" && pytest -n 2': ".ci/run",
    "investigate --metric revenue --window 7d": "test_the_main_job_prints_what_the_readme_shows",
    "investigate --data sales.parquet --metric revenue --window 7d --end 2026-03-29 --time-column date "
    "--dimensions country,platform,channel,category --json report.json": "test_your_own_data",
    "investigate --data employment_monthly.parquet --metric value --window 1mo --dimensions "
    "industry,region": "test_the_monthly_example_prints_what_the_readme_shows",
    "%investigate --data df --metric orders/sessions --window 7d": "tests/notebook/test_magics.py",
    "investigate triage --config triage.yaml [--json digest.json] [--dry-run] [--log-format json]":
        "test_the_morning_job_config_runs",
    "investigate --metric revenue --planner llm --model gpt-4o-mini --max-tokens-per-run 200000":
        "tests/llm/test_cli_llm.py (the fake OpenAI-compatible server)",
}  # fmt: skip


def blocks(language: str | None = None) -> list[str]:
    """The README's fenced code blocks (of one language, when given)."""
    found = re.findall(r"^```(\w*)\n(.*?)^```", README, flags=re.S | re.M)
    return [body for lang, body in found if language is None or lang == language]


def commands() -> set[str]:
    """Command lines in code blocks: `$ investigate ...`, `investigate ...`, `pip ...`, `%investigate`."""
    out = set()
    for body in blocks():
        text = re.sub(r"\\\n\s*", "", body)  # continuation lines
        for line in text.splitlines():
            line = re.sub(r"\s+#.*$", "", line.strip()).removeprefix("$ ")
            if line.startswith(("investigate ", "pip install", "%investigate ")):
                out.add(re.sub(r"\s+", " ", line))
    return out


def run(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`investigate ARGS` as a reader runs it from a script: no warm helper, a 100-column terminal."""
    scrubbed = {k: v for k, v in os.environ.items() if not k.startswith(("INVESTIGATOR_", "OPENAI_"))}
    return subprocess.run(
        [str(EXE), *args], cwd=cwd, capture_output=True, text=True, timeout=300, check=False,
        env=scrubbed | {"INVESTIGATOR_WARM": "0", "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"} | env,
    )  # fmt: skip


def shown_after(command: str) -> list[str]:
    """The lines the README prints under `$ COMMAND`, up to the block's end."""
    for body in blocks():
        lines = body.splitlines()
        for i, line in enumerate(lines):
            if line == f"$ {command}":
                return lines[i + 1 :]
    raise AssertionError(f"the README shows no output of {command!r}")


def words(text: str) -> str:
    """Text without box drawing and runs of spaces, so a panel reads the same at any width."""
    return " ".join(re.sub(r"[│╭╮╰╯─┃┏┓┗┛━┡┩╇┳┻┼└┘┌┐├┤]", " ", text).split())


def test_every_command_in_the_readme_is_run_by_a_test() -> None:
    assert commands() == set(RUN_BY)


def test_the_main_job_prints_what_the_readme_shows(tmp_path: Path) -> None:
    done = run(["--metric", "revenue", "--window", "7d"], tmp_path)
    assert done.returncode == 0, done.stderr
    shown = shown_after("investigate --metric revenue --window 7d")
    panel = shown[: next(i for i, line in enumerate(shown) if line.startswith("╰")) + 1]
    assert words("\n".join(panel)) in words(done.stdout)
    # the cause row and the hypothesis table, as the README abridges them
    assert re.search(r"channel=paid_search\s*│\s*123%\s*│\s*-81\.43k", done.stdout)
    for line in shown:
        status = re.match(r"\s*(H\d) (\w+)\s", line)
        if status:
            assert re.search(rf"{status[1]}\s*│\s*{status[2]}\s", done.stdout), line


def test_your_own_data(tmp_path: Path) -> None:
    shutil.copy(demo_path(), tmp_path / "sales.parquet")
    command = next(c for c in RUN_BY if c.startswith("investigate --data sales.parquet"))
    done = run(command.split()[1:], tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["root_causes"][0]["segment"] == {"channel": "paid_search"}
    assert report["window"] == {"start": "2026-03-23", "end": "2026-03-29"}
    assert report["inputs"]["dimensions"] == ["country", "platform", "channel", "category"]


def test_the_monthly_example_prints_what_the_readme_shows(tmp_path: Path) -> None:
    """The data of docs/examples/monthly.md (docs/examples/generate.py makes it the same way)."""
    frame, _ = generate_shaped(
        "monthly", plant="segment_change", seed=0, segment={"industry": "health"}, factor=0.5, attribute=False
    )
    frame.to_parquet(tmp_path / "employment_monthly.parquet", index=False)
    command = next(c for c in RUN_BY if "employment_monthly" in c)
    done = run(command.split()[1:], tmp_path)
    assert done.returncode == 0, done.stderr
    shown = shown_after(command)
    assert words("\n".join(shown)) in words(done.stdout)


def test_the_morning_job_config_runs(tmp_path: Path) -> None:
    """The README's triage.yaml, as printed, on a table with its columns; a dry run (scan and print)."""
    config = next(b for b in blocks("yaml") if b.startswith("# triage.yaml"))
    body = yaml.safe_load(config)
    dims = {"region": ["EU", "US", "APAC"], "os": ["ios", "android", "web"],
            "source": ["organic", "paid", "email"], "product_line": ["core", "plus"]}  # fmt: skip
    assert set(body["dimensions"]) == set(dims)
    frame, _ = generate("segment_change", seed=5, dims=dims, days=70, segment={"os": "ios"}, factor=0.5)
    frame.to_parquet(tmp_path / body["data"], index=False)
    (tmp_path / "triage.yaml").write_text(config)
    digest = tmp_path / "digest.json"
    done = run(
        ["triage", "--config", "triage.yaml", "--json", str(digest), "--dry-run"], tmp_path,
        SLACK_WEBHOOK_URL="json://127.0.0.1:9/never-called",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "series scanned" in done.stdout
    scanned = json.loads(digest.read_text())
    assert {row["metric"] for row in scanned["scanned"]} == set(body["metrics"])
    flagged = [row for row in scanned["scanned"] if row["flagged"]]
    assert flagged and flagged[0]["change_pct"] < 0  # the planted ios drop
    assert scanned["investigated"] == [] and scanned["notifications"] == []  # a dry run runs and tells none


@pytest.mark.anyio
async def test_the_mcp_client_configuration_starts_the_server(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters

    config = json.loads(next(b for b in blocks("json") if "mcpServers" in b))
    server = config["mcpServers"]["investigator"]
    assert server["command"] == "investigate"
    params = StdioServerParameters(
        command=str(EXE), args=server["args"], env=dict(os.environ), cwd=str(tmp_path)
    )
    async with Client(params) as client:
        names = {t.name for t in (await client.list_tools()).tools}
    assert {"describe_data", "investigate", "get_report", "list_runs", "resume", "triage"} <= names


def test_the_notebook_example_runs(tmp_path: Path) -> None:
    """The README's Python block, with `df` the demo table: a run, its fields, and a continued run."""
    code = next(b for b in blocks("python") if "from investigator import investigate" in b)
    script = tmp_path / "notebook.py"
    script.write_text(
        "import pandas as pd\n"
        f"df = pd.read_parquet({str(demo_path())!r})\n"
        + "\n".join(line.split("  #")[0] for line in code.splitlines())
        + "\nprint(inv.conclusion); print(inv.root_causes[0].segment); print(more.status)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INVESTIGATOR_", "OPENAI_"))}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
        env=env | {"INVESTIGATOR_RUNS_DIR": str(tmp_path / "runs")}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    conclusion, segment, status = done.stdout.strip().splitlines()[-3:]
    assert "channel=paid_search" in conclusion and segment == "{'channel': 'paid_search'}"
    assert status == "concluded"
