"""The front doors' one wiring: flags (the CLI's options, the notebook's keyword arguments, the
magics' words) turned into the question, the settings and the LLM choices, with one message per
mistake. A new flag is a field here and an option or argument at each door."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import NamedTuple

from investigator.config import Settings, load_settings
from investigator.factories import LLMChoice
from investigator.request import Request, build_request


class Asked(NamedTuple):
    request: Request
    settings: Settings
    llm: LLMChoice


def ask(
    *,
    metric: str | None,
    data: str | None = None,
    table: str | None = None,
    sql: str | None = None,
    window: str = "7d",
    end: str | date | None = None,
    baseline: str = "previous",
    time_column: str | None = None,
    dimensions: list[str] | str | None = None,
    keep_dimensions: list[str] | str | None = None,
    objective: str | None = None,
    filter: str | dict[str, str] | None = None,
    semantic_manifest: str | Path | None = None,
    planner: str | None = None,
    sandbox: str | None = None,
    max_iterations: int | None = None,
    max_tokens_per_run: int | None = None,
    model: str | None = None,
    llm_mode: str | None = None,
    runs_dir: str | Path | None = None,
    home: str | Path | None = None,
    flag: str = "",
    by_owner: bool = False,
) -> Asked:
    """The request, the settings (configs and environment, these flags over them) and the LLM
    choices; `flag` prefixes option names in messages ("--" on the command line)."""
    request = build_request(
        metric, data or None, window, end, baseline, time_column, dimensions, objective,
        flag=flag, table=table, sql=sql, keep_dimensions=keep_dimensions,
        filter=filter, semantic_manifest=str(semantic_manifest) if semantic_manifest else None,
        by_owner=by_owner,
    )  # fmt: skip
    settings = load_settings(
        planner=planner,
        sandbox=sandbox,
        max_iterations=max_iterations,
        max_tokens_per_run=max_tokens_per_run,
        runs_dir=runs_dir,
        home=home,
    )
    return Asked(request, settings, LLMChoice(model=model, mode=llm_mode))
