"""`investigate`: the command line. Exit codes: 0 done, 2 user error, 1 internal error."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from investigator.config import load_settings
from investigator.errors import InvestigatorError, UserError
from investigator.front.live import progress
from investigator.report.model import Report, render_terminal
from investigator.runner import LLMChoice, investigate, resume
from investigator.sources.request import build_request

app = typer.Typer(add_completion=False, no_args_is_help=False, help="Explain why a metric moved.")
err = Console(stderr=True, soft_wrap=True)


def _finish(report: Report, json_path: Path | None, quiet: bool) -> None:
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(report.model_dump_json(indent=2))
    render_terminal(report, Console(), quiet=quiet)


def _guard(fn: Callable[[], None]) -> None:
    try:
        fn()
    except UserError as e:
        err.print(f"[bold red]error:[/] {e}", highlight=False)
        raise typer.Exit(2) from None
    except InvestigatorError as e:
        err.print(f"[bold red]failed:[/] {e}", highlight=False)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        err.print("interrupted; the run's state is saved: resume it with `investigate resume RUN_ID`")
        raise typer.Exit(130) from None


@app.callback(invoke_without_command=True)
def main_command(
    ctx: typer.Context,
    metric: Annotated[
        str | None, typer.Option(help="Configured metric, a column (summed) or a ratio a/b.")
    ] = None,
    data: Annotated[
        Path | None, typer.Option(help="CSV or Parquet file; default: the metric's or the demo data.")
    ] = None,
    window: Annotated[str, typer.Option(help="Current window: Nd or Nw.")] = "7d",
    end: Annotated[
        str | None, typer.Option(help="Last day of the window (YYYY-MM-DD); default: last date in the data.")
    ] = None,
    baseline: Annotated[str, typer.Option(help="previous | wow | yoy")] = "previous",
    time_column: Annotated[
        str | None, typer.Option(help="Date column (default: the metric's, else 'date').")
    ] = None,
    dimensions: Annotated[str | None, typer.Option(help="Comma-separated dimension columns.")] = None,
    objective: Annotated[str | None, typer.Option(help="The question in words.")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON here.")] = None,
    quiet: Annotated[bool, typer.Option(help="Print only the conclusion.")] = False,
    planner: Annotated[str | None, typer.Option(help="offline (default) or llm.")] = None,
    sandbox: Annotated[
        str | None,
        typer.Option(help="local or docker (default: local for the offline planner, docker for llm)."),
    ] = None,
    max_iterations: Annotated[int | None, typer.Option(help="Stop after this many steps.")] = None,
    max_tokens_per_run: Annotated[
        int | None, typer.Option(help="LLM planner: conclude once this many tokens are used.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="LLM planner: model name at OPENAI_BASE_URL.")] = None,
    llm_mode: Annotated[
        str | None, typer.Option(help="LLM planner: tools | json | json_schema | md_json.")
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where run folders go (default ./runs).")] = None,
) -> None:
    """Investigate why METRIC moved in the last WINDOW compared with its baseline."""
    ctx.obj = {"runs_dir": runs_dir, "json_path": json_path, "quiet": quiet}
    if ctx.invoked_subcommand is not None:
        return

    def go() -> None:
        request = build_request(
            metric, str(data) if data else None, window, end, baseline, time_column, dimensions, objective,
            flag="--",
        )  # fmt: skip
        settings = load_settings(
            planner=planner,
            sandbox=sandbox,
            max_iterations=max_iterations,
            max_tokens_per_run=max_tokens_per_run,
            runs_dir=runs_dir,
        )
        with progress(settings.max_iterations, enabled=not quiet) as hooks:
            report = investigate(request, settings, hooks, llm=LLMChoice(model=model, mode=llm_mode))
        _finish(report, json_path, quiet)

    _guard(go)


@app.command("resume")
def resume_command(ctx: typer.Context, run_id: str) -> None:
    """Continue a run from its last completed iteration."""
    opts = ctx.obj or {}

    def go() -> None:
        settings = load_settings(runs_dir=opts.get("runs_dir"))
        with progress(settings.max_iterations, enabled=not opts.get("quiet", False)) as hooks:
            report = resume(run_id, settings, hooks)
        _finish(report, opts.get("json_path"), opts.get("quiet", False))

    _guard(go)


def main() -> None:
    from sandbox.hardening import no_dumps

    no_dumps()  # kernel code running as this user cannot read our environment (the API key)
    app()
