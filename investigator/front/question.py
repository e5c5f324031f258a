"""The options a question takes, declared once: each one's name, help, default, type and the doors
that take it. Every door is made from `OPTIONS`: the CLI's options (`cli_parameters`), the notebook
function's keyword arguments (`notebook_parameters`), the magics (which parse a line with the CLI's
own options) and the MCP `investigate` tool's input schema (`mcp_parameters`). Every door hands
what it was given to one function (`front.flags.ask`), so a value is checked, and refused in one
line, in one place; only the option's name in that line follows the door (`--window` on the
command line, `window` elsewhere).

A new option is one `Option` here and a field of `Request` or `Settings` that `ask` fills."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

__all__ = [
    "DOORS",
    "GROUPS",
    "OPTIONS",
    "Option",
    "cli_parameters",
    "mcp_parameters",
    "notebook_parameters",
    "with_options",
]

Door = Literal["cli", "notebook", "mcp"]
DOORS: tuple[Door, ...] = ("cli", "notebook", "mcp")
LOCAL: tuple[Door, ...] = ("cli", "notebook")  # the process owner's doors: folders, models, sandboxes
GROUPS = ("The question", "The data", "The run", "Output")
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Option:
    """One option of a question. `kind` is its value's type (`many`: a list of them, written
    comma-separated on the command line); `most` is a ceiling a remote client (MCP) is held to."""

    name: str
    help: str
    group: str
    default: Any = None
    kind: type = str
    many: bool = False
    choices: tuple[str, ...] = ()
    least: int | None = None
    most: int | None = None
    required: bool = False  # in the MCP schema; the CLI and notebook refuse its absence in our words
    python: Any = None  # a type the notebook also takes for it (a `date` for `end`)
    doors: tuple[Door, ...] = DOORS

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def takes(self, door: Door) -> bool:
        return door in self.doors


Q, D, R = GROUPS[:3]
OPTIONS: tuple[Option, ...] = (
    Option("metric", "Configured metric, a column (summed) or a ratio a/b.", Q, required=True),
    Option(
        "data",
        "CSV or Parquet file, or a connection URL (duckdb:///f.ddb, postgres://user@host/db, "
        "sqlite:///f.db, spark://local[2], ...) or env:VAR naming one; default: the metric's or the "
        "demo data.",
        D,
    ),
    Option("table", "With a URL: the table (for spark://, also a Parquet path).", D),
    Option("sql", "With a URL: a read-only query whose result is the data.", D),
    Option(
        "window",
        "Current window: Nd, Nw, Nmo (or Nm), Nq, Ny, or a range of whole periods "
        "2026-03-01..2026-03-07 (then no --end).",
        Q,
        default="7d",
    ),
    Option(
        "end",
        "Last day of the window (YYYY-MM-DD, or 2024-03, 2024-Q1, 2024); default: the data's last.",
        Q,
        python=date,
    ),
    Option(
        "baseline",
        "previous | wow | mom | qoq | yoy | avgN (the mean of the N windows before, N 2..52) | a range "
        "2026-02-01..2026-02-07 (compared per period if its length differs).",
        Q,
        default="previous",
    ),
    Option("time_column", "Date column (default: the metric's, else 'date').", D),
    Option(
        "dimensions",
        "Dimension columns to localize, comma-separated (default: the text columns of few values).",
        Q,
        many=True,
    ),
    Option(
        "keep_dimensions",
        "Dimensions to localize even when their values look like identifiers.",
        Q,
        many=True,
    ),
    Option("objective", "The question in words.", Q),
    Option(
        "filter",
        "Only these rows: a segment (region=EU, several joined with , or &; compared as text) or a "
        "boolean SQL expression over the columns (\"amount > 100 AND region IN ('EU','UK')\").",
        Q,
        python=dict[str, str],
    ),
    Option(
        "semantic_manifest",
        "A dbt semantic manifest (target/semantic_manifest.json) or a dbt project folder: --metric "
        "names one of its metrics.",
        D,
        kind=Path,
        doors=LOCAL,
    ),
    Option("planner", "Who decides each step: offline (default) or llm.", R, choices=("offline", "llm")),
    Option(
        "sandbox",
        "Where the generated code runs: local or docker (default: local for the offline planner, "
        "docker for llm).",
        R,
        doors=LOCAL,
    ),
    Option(
        "max_iterations",
        "Stop with a partial conclusion after this many steps.",
        R,
        kind=int,
        least=1,
        most=100,
    ),
    Option(
        "max_tokens_per_run",
        "LLM planner: conclude once this many tokens are used.",
        R,
        kind=int,
        least=1,
        doors=LOCAL,
    ),
    Option("model", "LLM planner: the model's name at OPENAI_BASE_URL.", R, doors=LOCAL),
    Option(
        "llm_mode",
        "LLM planner structured output: auto (default: the strictest the server enforces) | "
        "json_schema | json_object_schema | tools | json | md_json.",
        R,
        choices=("auto", "json_schema", "json_object_schema", "tools", "json", "md_json"),
        doors=LOCAL,
    ),
    Option("runs_dir", "Where run folders go (default ./runs).", R, kind=Path, doors=LOCAL),
    Option("home", "The project's memory folder (default ./.investigator).", R, kind=Path, doors=LOCAL),
)


def named(name: str) -> Option:
    return next(o for o in OPTIONS if o.name == name)


def cli_parameters(options: Iterable[Option] | None = None) -> list[inspect.Parameter]:
    """The command line's options: text as typed (a list comma-separated), in their help group."""
    import typer

    params = []
    for o in OPTIONS if options is None else options:
        if not o.takes("cli"):
            continue
        kind: Any = o.kind if o.default is not None else o.kind | None
        info = typer.Option(help=o.help, rich_help_panel=o.group, show_default=o.default is not None)
        params.append(_keyword(o.name, Annotated[kind, info], o.default))
    return params


def notebook_parameters(options: Iterable[Option] | None = None) -> list[inspect.Parameter]:
    """The notebook function's keyword arguments: a list or comma-separated text, a path or its
    text, a day or its text."""
    params = []
    for o in OPTIONS if options is None else options:
        if not o.takes("notebook"):
            continue
        kind: Any = o.kind
        if o.many:
            kind = list[o.kind] | o.kind  # type: ignore[name-defined]
        elif o.kind is Path:
            kind = str | Path
        if o.python is not None:
            kind = kind | o.python
        params.append(_keyword(o.name, kind if o.default is not None else kind | None, o.default))
    return params


def mcp_parameters(options: Iterable[Option] | None = None) -> list[inspect.Parameter]:
    """The MCP tool's arguments, whose JSON Schema the SDK publishes. Bounds are shown to the client
    (minimum, maximum, enum) but checked by `ask`, so a refusal reads as the command line's."""
    from pydantic import Field

    params = []
    for o in OPTIONS if options is None else options:
        if not o.takes("mcp"):
            continue
        kind: Any = list[o.kind] if o.many else o.kind  # type: ignore[name-defined]
        extra: dict[str, Any] = {}
        if o.choices:
            extra["enum"] = [*o.choices, *([] if o.required else [None])]
        if o.least is not None:
            extra["minimum"] = o.least
        if o.most is not None:
            extra["maximum"] = o.most
        field = Field(description=o.help, json_schema_extra=extra or None)
        if o.required:
            params.append(_keyword(o.name, Annotated[kind, field], inspect.Parameter.empty))
        else:
            optional = kind if o.default is not None else kind | None
            params.append(_keyword(o.name, Annotated[optional, field], o.default))
    return params


def _keyword(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)


def with_options(fn: F, made: list[inspect.Parameter]) -> F:
    """`fn`, which takes `**options`, presented with the declared options in their place (those it
    names itself, such as the notebook's positional `data` and `metric`, stay as it has them): what
    typer, the MCP SDK, `help()` and Jupyter read (its signature and annotations)."""
    try:
        own = inspect.signature(fn, eval_str=True)
    except NameError:  # a name imported only for type checkers (the notebook's `pd`): kept as text
        own = inspect.signature(fn)
    kept = [p for p in own.parameters.values() if p.kind is not p.VAR_KEYWORD]
    added = [p for p in made if p.name not in own.parameters]
    positional = [p for p in kept if p.kind is not p.KEYWORD_ONLY]
    params = [*positional, *added, *(p for p in kept if p.kind is p.KEYWORD_ONLY)]
    signature = own.replace(parameters=params)
    fn.__signature__ = signature  # type: ignore[attr-defined]
    fn.__annotations__ = {p.name: p.annotation for p in params if p.annotation is not p.empty}
    if signature.return_annotation is not signature.empty:
        fn.__annotations__["return"] = signature.return_annotation
    return fn
