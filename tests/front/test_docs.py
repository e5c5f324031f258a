"""Issue 39, item 2: the docs had drifted from the doors. `docs/cli.md` names every flag of every
command (or the command's own page does), every baseline, every LLM mode and every measure; the
CONTRIBUTING guide names only files that exist; every command's help shows an example."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, get_args

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from investigator.analysis.grain import BASELINES
from investigator.analysis.spec import MeasureKind
from investigator.front.cli import app
from investigator.llm.settings import Mode

ROOT = Path(__file__).parents[2]
CLI_MD = (ROOT / "docs" / "cli.md").read_text()
PAGES = {
    "triage": "triage.md",
    "facts": "memory.md",
    "memory": "memory.md",
    "mcp": "mcp.md",
    "warm": "speed.md",
}


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _commands(sub, (*path, name))
    return found


COMMANDS = _commands(get_command(app))


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=lambda p: " ".join(p) or "investigate")
def test_every_flag_is_in_the_cli_reference(path: tuple[str, ...]) -> None:
    command = dict(COMMANDS)[path]
    page = CLI_MD
    flags = [o for p in command.params if p.param_type_name == "option" for o in p.opts if o.startswith("--")]
    missing = [f for f in flags if f != "--help" and not re.search(rf"`{re.escape(f)}[ `=]", page)]
    assert not missing, f"{' '.join(('investigate', *path))}: {missing} not in docs/cli.md"


def test_every_baseline_mode_and_measure_is_in_the_cli_reference() -> None:
    words = [*BASELINES, "avgN", "2026-02-01..2026-02-07", *get_args(Mode), *get_args(MeasureKind), "avg"]
    missing = [w for w in words if f"`{w}" not in CLI_MD]
    assert not missing, missing


def test_the_reference_test_can_fail() -> None:
    assert not re.search(r"`--no-such-flag[ `=]", CLI_MD)


@pytest.mark.parametrize("path", [p for p, c in COMMANDS if not getattr(c, "commands", None)], ids=" ".join)
def test_every_command_help_has_an_example(path: tuple[str, ...]) -> None:
    r = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "Example" in r.output, r.output


def test_the_main_help_groups_its_options_and_shows_examples_and_exit_codes() -> None:
    r = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"})
    out = r.output
    for heading in ("The question", "The data", "The run", "Output", "Examples", "Exit codes"):
        assert heading in out
    assert out.count("  investigate --") >= 3 and "env:" in out  # the demo, a file, a warehouse


def test_contributing_names_only_files_that_exist() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text()
    named = set(re.findall(r"`([\w./-]+\.(?:py|md|yaml|json|toml|ipynb))`", text))
    named |= set(re.findall(r"\(([\w./-]+\.(?:py|md))\)", text))
    bases = [ROOT, ROOT / "investigator", ROOT / "investigator" / "sources", ROOT / "investigator" / "kinds"]
    inside = {n for n in named if not n.startswith("../")}  # `../shared/...` is beside the repo, not in it
    missing = sorted(n for n in inside if not any((b / n).exists() for b in bases))
    assert not missing, missing
