"""The front doors' one wiring: the declared options (`front.question`), as any door received them,
turned into the question, the settings and the LLM choices, with one message per mistake."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from investigator.config import Settings, load_settings
from investigator.errors import UserError
from investigator.factories import LLMChoice
from investigator.fmt import quoted
from investigator.front import question
from investigator.front.question import Door
from investigator.limits import check_lengths
from investigator.request import Request, build_request


class Asked(NamedTuple):
    request: Request
    settings: Settings
    llm: LLMChoice


def ask(*, flag: str = "", by_owner: bool = False, door: Door = "cli", **given: Any) -> Asked:
    """The request, the settings (configs and environment, these options over them) and the LLM
    choices from the declared options' values; `flag` prefixes option names in messages ("--" on
    the command line). A remote door (`mcp`) is held to each option's ceiling."""
    known = {o.name: o for o in question.OPTIONS}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise UserError(f"{flag}{unknown[0]!r} is not an option; the options are: {', '.join(known)}")
    value = {name: given.get(name, o.default) for name, o in known.items()}
    check_lengths({k: str(v) if isinstance(v, Path) else v for k, v in value.items()}, flag)
    for name, o in known.items():
        v, shown = value[name], o.flag if flag == "--" else flag + name
        if o.choices and v is not None and v not in o.choices:
            raise UserError(f"{shown} {quoted(v)} is not one of {', '.join(o.choices)}")
        if o.least is not None and isinstance(v, int) and v < o.least:
            raise UserError(f"{shown} must be at least {o.least} (got {v})")
        if door == "mcp" and o.most is not None and isinstance(v, int) and v > o.most:
            raise UserError(f"{shown} must be at most {o.most} here (got {v}), this server's ceiling")
    manifest = value["semantic_manifest"]
    request = build_request(
        value["metric"], value["data"] or None, value["window"], value["end"], value["baseline"],
        value["time_column"], value["dimensions"], value["objective"],
        flag=flag, table=value["table"], sql=value["sql"], keep_dimensions=value["keep_dimensions"],
        filter=value["filter"], semantic_manifest=str(manifest) if manifest else None, by_owner=by_owner,
    )  # fmt: skip
    settings = load_settings(
        planner=value["planner"],
        sandbox=value["sandbox"],
        max_iterations=value["max_iterations"],
        max_tokens_per_run=value["max_tokens_per_run"],
        runs_dir=value["runs_dir"],
        home=value["home"],
    )
    return Asked(request, settings, LLMChoice(model=value["model"], mode=value["llm_mode"]))
