"""Issue 39, item 1: a question's options are declared once (`front.question.OPTIONS`) and every
door is made from that declaration: the CLI's options, the notebook function's keyword arguments,
the magics and the MCP tool's input schema. An option added to the declaration reaches every door;
every option reaches each door that takes it, and a bad value is refused in the same line at each."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, get_args

import anyio
import pytest
from mcp import Client
from typer.main import get_command

from investigator.errors import UserError
from investigator.front import question
from investigator.front.cli import app
from investigator.front.magics import parse
from investigator.front.mcp_server import build_server
from investigator.front.mcp_tools import Place
from investigator.front.notebook import investigate
from investigator.limits import ARGUMENT_CHARS, DEFAULT_CHARS
from investigator.llm.settings import Mode

ADDED = """
import json, sys, inspect, asyncio
from pathlib import Path
from investigator.front import question
question.OPTIONS = (*question.OPTIONS, question.Option("novelty", "A new option, declared once.", "The run"))
from typer.testing import CliRunner
from investigator.front.cli import app
from investigator.front.magics import parse
from investigator.front.notebook import investigate
from investigator.front.mcp_server import build_server
from investigator.front.mcp_tools import Place
from mcp import Client

async def schema():
    server, _ = build_server(Place(runs_dir=Path("r"), home=Path("h")))
    async with Client(server) as client:
        tools = (await client.list_tools()).tools
        return next(t for t in tools if t.name == "investigate").input_schema

help = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "200"}).output
print(json.dumps({
    "cli": "--novelty" in help and "A new option, declared once." in help,
    "notebook": "novelty" in inspect.signature(investigate).parameters,
    "magic": parse("--metric revenue --novelty yes")[1].get("novelty"),
    "mcp": asyncio.run(schema())["properties"].get("novelty", {}).get("description"),
}))
"""


def test_an_option_added_to_the_declaration_reaches_every_door() -> None:
    r = subprocess.run([sys.executable, "-c", ADDED], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    assert seen == {"cli": True, "notebook": True, "magic": "yes", "mcp": "A new option, declared once."}


def _mcp_schema(tool: str = "investigate") -> dict[str, Any]:
    async def listed() -> dict[str, Any]:
        server, _ = build_server(Place(runs_dir=Path("r"), home=Path("h")))
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
            return next(t for t in tools if t.name == tool).input_schema

    return anyio.run(listed)


def test_every_declared_option_is_at_every_door_that_takes_it_and_nowhere_else() -> None:
    cli = {p.name: p for p in get_command(app).params if p.param_type_name == "option"}
    notebook = inspect.signature(investigate).parameters
    mcp = _mcp_schema()
    for o in question.OPTIONS:
        assert (o.name in cli) == o.takes("cli"), o.name
        assert (o.name in notebook) == o.takes("notebook"), o.name
        assert (o.name in mcp["properties"]) == o.takes("mcp"), o.name
        if o.takes("cli"):
            assert getattr(cli[o.name], "help", None) == o.help and cli[o.name].opts == [o.flag]
            assert cli[o.name].default == o.default
        if o.takes("notebook"):
            assert notebook[o.name].default == o.default
        if o.takes("mcp"):
            field = mcp["properties"][o.name]
            assert field["description"] == o.help and field.get("default") == o.default
    declared = {o.name for o in question.OPTIONS}
    assert set(mcp["properties"]) == {o.name for o in question.OPTIONS if o.takes("mcp")}
    assert mcp["required"] == ["metric"]
    assert mcp["properties"]["max_iterations"]["maximum"] == 100
    assert set(cli) - declared == {"json_path", "quiet", "verbose", "version"}
    assert set(notebook) - declared == {"json_path", "quiet"}
    described = _mcp_schema("describe_data")  # the same options, none required, no default window
    assert "required" not in described and described["properties"]["window"]["default"] is None
    for name, field in described["properties"].items():
        assert field["description"] == question.named(name).help


def test_the_llm_modes_declared_are_the_planners() -> None:
    assert question.named("llm_mode").choices == get_args(Mode)


def _too_long(name: str) -> str:
    return "x" * (ARGUMENT_CHARS.get(name, DEFAULT_CHARS) + 1)


# a bad value per option, and the words its refusal must hold (after the option's name)
BAD: dict[str, tuple[Any, str]] = {
    "metric": ("revenue/", "'revenue/' is not a column or a ratio of two columns"),
    "window": ("7x", "'7x' is not understood"),
    "end": ("yesterday", "'yesterday' is not a date"),
    "baseline": ("month", "'month' is not understood"),
    "planner": ("magic", "'magic' is not one of offline, llm"),
    "llm_mode": ("yaml", "'yaml' is not one of auto, json_schema"),
    "max_iterations": (0, "must be at least 1 (got 0)"),
    "max_tokens_per_run": (0, "must be at least 1"),
}
for _o in question.OPTIONS:  # every text option: its length is capped, in the same words at each door
    if _o.kind is str and _o.name not in BAD:
        BAD[_o.name] = (_too_long(_o.name), "characters long, more than")
NO_REFUSAL = {"semantic_manifest", "runs_dir", "home"}  # paths: a missing one is refused where it is read


def test_every_option_has_a_refusal_to_check() -> None:
    assert set(BAD) | NO_REFUSAL == {o.name for o in question.OPTIONS}


def _cli_line(name: str, value: Any) -> str:
    from typer.testing import CliRunner

    o = question.named(name)
    args = [] if name == "metric" else ["--metric", "revenue"]
    r = CliRunner().invoke(app, [*args, o.flag, str(value)], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    return " ".join(r.output.split())


def _mcp_line(name: str, value: Any) -> str:
    async def called() -> str:
        server, _ = build_server(Place(runs_dir=Path("r"), home=Path("h")))
        async with Client(server) as client:
            args: dict[str, Any] = {"metric": "revenue", name: value}
            result = await client.call_tool("investigate", args)
            assert result.is_error
            return " ".join(c.text for c in result.content if c.type == "text")

    return anyio.run(called)


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_value_is_refused_in_the_same_line_at_every_door(name: str, tmp_path: Path) -> None:
    value, words = BAD[name]
    o = question.named(name)
    with pytest.raises(UserError) as notebook:
        investigate(**{"metric": "revenue", "runs_dir": tmp_path, name: value})
    line = " ".join(str(notebook.value).split())
    assert line.startswith(name) and words in line, line
    cli = _cli_line(name, value)  # the same line, the option named as the command line writes it
    assert cli.startswith(f"error: {o.flag if name != 'metric' else name} ")
    assert cli.replace(o.flag, name).replace("--", "") == f"error: {line}".replace("--", "")

    metric = "" if name == "metric" else "--metric revenue "
    _, params = parse(f"{metric}{o.flag} {value}")
    with pytest.raises(UserError) as magic:
        investigate(**params)
    assert " ".join(str(magic.value).split()) == line
    if o.takes("mcp"):
        assert _mcp_line(name, [value] if o.many else value) == f"error: {line}"
