"""`investigate`: the command line.

Exit codes: 0 concluded, 3 cut short (a partial conclusion at a limit: continue it with
`investigate resume RUN_ID --more N`), 2 user error, 1 internal error, 4 the model endpoint was lost
(the run is saved: `investigate resume RUN_ID`), 130 interrupted.
"""

from __future__ import annotations

import errno
import gc
import logging
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from investigator.config import load_settings
from investigator.errors import Interrupted, InvestigatorError, UserError
from investigator.files import write_atomic
from investigator.front.flags import ask
from investigator.front.live import progress
from investigator.report.model import Report, render_terminal
from investigator.runner import continue_run, investigate, resume
from investigator.terminal import library_logs, text

app = typer.Typer(add_completion=False, no_args_is_help=False, help="Explain why a metric moved.")
err = Console(stderr=True, soft_wrap=True)


# when this command began (`time.monotonic()`), as `main` was told: the stats count the program's own start
program_started: float | None = None


CUT_SHORT = 3
ENDPOINT_LOST = 4  # the model endpoint was lost mid-run (`LLMUnavailable.exit_code`); the run is saved


def _finish(report: Report, json_path: Path | None, quiet: bool, runs_dir: Path) -> None:
    """Print the report (or its JSON, with `--json -`), say where the files are, and exit 3 when
    the run stopped at a limit, so a scheduler can tell done from cut short."""
    as_json = report.model_dump_json(indent=2)
    folder = runs_dir / report.run_id
    missing = [p.name for p in (folder / "report.html", folder / "investigation.ipynb") if not p.exists()]
    if json_path is not None and str(json_path) == "-":
        print(as_json)
    else:
        if json_path is not None:
            json_path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(json_path, as_json)  # whole or not at all, even on a full disk
        render_terminal(report, Console(), quiet=quiet)
        if not quiet and not missing:
            err.print(text(f"report: {folder / 'report.html'} · trail: {folder / 'investigation.ipynb'}"))
    if missing:  # the answer stands (report.json), but a file people open is not there: not a success
        err.print(
            text("failed: ", style="bold red")
            + text(
                f"{' and '.join(missing)} could not be written in {folder} (see above); the answer is in "
                f"report.json: free space, then `investigate resume {report.run_id}` writes them"
            ),
            highlight=False,
        )
        raise typer.Exit(1)
    if report.status == "partial":
        err.print(
            text(
                f"stopped after {report.stats.iterations} iterations ({report.stop_reason}): the conclusion "
                f"is partial; continue with `investigate resume {report.run_id} --more 5`",
                style="yellow",
            )
        )
        raise typer.Exit(CUT_SHORT)


def _guard(fn: Callable[[], None]) -> None:
    """One line per failure, never a traceback; text from the data is printed as text. A stop
    signal during an investigation is Ctrl-C (`_stop_as_interrupt`)."""
    stops = (signal.SIGTERM, signal.SIGHUP)
    try:
        before = {s: signal.signal(s, _stop_as_interrupt) for s in stops}
    except ValueError:  # not the main thread (an embedding caller): its own handlers stay
        before = {}
    try:
        _one_line(fn)
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


def _one_line(fn: Callable[[], None]) -> None:
    try:
        fn()
    except UserError as e:
        err.print(text("error: ", style="bold red") + text(e), highlight=False)
        raise typer.Exit(2) from None
    except InvestigatorError as e:
        lost = e.exit_code == ENDPOINT_LOST
        head = "the model endpoint was lost: " if lost else "failed: "
        err.print(text(head, style="bold red") + text(e), highlight=False)
        raise typer.Exit(ENDPOINT_LOST if lost else 1) from None
    except OSError as e:  # a file of ours (--json) on a full or read-only disk
        if e.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT, errno.EROFS, errno.EACCES):
            raise
        where = f" {e.filename}" if e.filename else ""
        err.print(text("failed: ", style="bold red") + text(f"could not write{where}: {e.strerror}"))
        raise typer.Exit(1) from None
    except Interrupted as e:
        if e.reports_only:
            err.print(
                text(
                    f"interrupted while writing the reports; run {e.run_id} is saved, concluded: "
                    f"`investigate resume {e.run_id}` writes them"
                )
            )
        elif e.resumable:
            err.print(
                text(f"interrupted; the run is saved: continue it with `investigate resume {e.run_id}`")
            )
        else:
            err.print(text(f"interrupted before run {e.run_id} saved anything"))
        raise typer.Exit(130) from None
    except KeyboardInterrupt:
        err.print(text("interrupted before the run started; nothing was saved: run the same command again"))
        raise typer.Exit(130) from None


def _version(show: bool) -> None:
    if show:
        from investigator.version import __version__

        print(f"investigate {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def main_command(
    ctx: typer.Context,
    metric: Annotated[
        str | None, typer.Option(help="Configured metric, a column (summed) or a ratio a/b.")
    ] = None,
    data: Annotated[
        str | None,
        typer.Option(
            help="CSV or Parquet file, or a connection URL (duckdb:///f.ddb, postgres://user@host/db, "
            "sqlite:///f.db, spark://local[2], ...) or env:VAR naming one; default: the metric's or the "
            "demo data."
        ),
    ] = None,
    table: Annotated[
        str | None, typer.Option(help="With a URL: the table (for spark://, also a Parquet path).")
    ] = None,
    sql: Annotated[str | None, typer.Option(help="With a URL: a query whose result is the data.")] = None,
    window: Annotated[
        str,
        typer.Option(
            help="Current window: Nd, Nw, Nmo (or Nm), Nq, Ny, or a range of whole periods "
            "2026-03-01..2026-03-07 (then no --end)."
        ),
    ] = "7d",
    end: Annotated[
        str | None, typer.Option(help="Last day of the window (YYYY-MM-DD); default: last date in the data.")
    ] = None,
    baseline: Annotated[
        str,
        typer.Option(
            help="previous | wow | mom | qoq | yoy | avgN (the mean of the N windows before, N 2..52) "
            "| a range 2026-02-01..2026-02-07 (compared per period if its length differs)"
        ),
    ] = "previous",
    time_column: Annotated[
        str | None, typer.Option(help="Date column (default: the metric's, else 'date').")
    ] = None,
    dimensions: Annotated[str | None, typer.Option(help="Comma-separated dimension columns.")] = None,
    keep_dimensions: Annotated[
        str | None,
        typer.Option(help="Comma-separated dimensions to localize even when their values look like ids."),
    ] = None,
    objective: Annotated[str | None, typer.Option(help="The question in words.")] = None,
    filter: Annotated[
        str | None,
        typer.Option(
            help="Only these rows: a segment (region=EU, several joined with , or &; compared as text) "
            "or a boolean SQL expression over the columns (\"amount > 100 AND region IN ('EU','UK')\")."
        ),
    ] = None,
    semantic_manifest: Annotated[
        Path | None,
        typer.Option(
            help="A dbt semantic manifest (target/semantic_manifest.json) or a dbt project folder: "
            "--metric names one of its metrics."
        ),
    ] = None,
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
        str | None,
        typer.Option(
            help="LLM planner structured output: auto (default: the strictest the server enforces) | "
            "json_schema | json_object_schema | tools | json | md_json."
        ),
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where run folders go (default ./runs).")] = None,
    home: Annotated[
        Path | None, typer.Option(help="The project's memory folder (default ./.investigator).")
    ] = None,
    verbose: Annotated[
        bool, typer.Option(help="Print the libraries' INFO logs too (each HTTP request to the model).")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Investigate why METRIC moved in the last WINDOW compared with its baseline."""
    if verbose:
        library_logs(logging.INFO)
    ctx.obj = {"runs_dir": runs_dir, "json_path": json_path, "quiet": quiet, "home": home}
    if ctx.invoked_subcommand is not None:
        return

    def go() -> None:
        request, settings, choice = ask(
            metric=metric, data=data, table=table, sql=sql, window=window, end=end, baseline=baseline,
            time_column=time_column, dimensions=dimensions, keep_dimensions=keep_dimensions,
            objective=objective, filter=filter, semantic_manifest=semantic_manifest, planner=planner,
            sandbox=sandbox,
            max_iterations=max_iterations, max_tokens_per_run=max_tokens_per_run, model=model,
            llm_mode=llm_mode, runs_dir=runs_dir, home=home, flag="--", by_owner=True,
        )  # fmt: skip
        with progress(settings.max_iterations, enabled=not quiet) as hooks:
            report = investigate(request, settings, hooks, llm=choice, started=program_started)
        _finish(report, json_path, quiet, settings.runs_dir)

    _guard(go)


@app.command("resume")
def resume_command(
    ctx: typer.Context,
    run_id: str,
    more: Annotated[
        int | None, typer.Option(min=1, help="Give a finished or cut-short run this many more steps.")
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where run folders are (default ./runs).")] = None,
    semantic_manifest: Annotated[
        Path | None,
        typer.Option(
            help="A dbt semantic manifest (target/semantic_manifest.json) or a dbt project folder: "
            "--metric names one of its metrics."
        ),
    ] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the report as JSON here.")] = None,
    quiet: Annotated[bool, typer.Option(help="Print only the conclusion.")] = False,
    force: Annotated[
        bool, typer.Option(help="The data changed since the run started: run it again on the new data.")
    ] = False,
) -> None:
    """Continue a run from its last completed iteration (killed or stopped), or with --more N give
    it N more steps."""
    opts = ctx.obj or {}
    runs_dir, json_path = runs_dir or opts.get("runs_dir"), json_path or opts.get("json_path")
    quiet = quiet or bool(opts.get("quiet", False))

    def go() -> None:
        settings = load_settings(runs_dir=runs_dir)
        with progress(settings.max_iterations, enabled=not quiet) as hooks:
            if more:
                report = continue_run(run_id, settings, more, hooks, force=force, started=program_started)
            else:
                report = resume(run_id, settings, hooks, force=force, started=program_started)
        _finish(report, json_path, quiet, settings.runs_dir)

    _guard(go)


def _register_subcommands() -> None:
    """Each feature owns its commands in its own module (kept light to import: heavy imports happen
    inside the commands)."""
    from investigator.front.mcp_cli import mcp_command
    from investigator.memory.cli import facts_app, memory_app
    from investigator.triage.cli import app as triage_app
    from investigator.warm.cli import app as warm_app

    app.add_typer(triage_app, name="triage")
    app.add_typer(warm_app, name="warm")
    app.add_typer(facts_app, name="facts")
    app.add_typer(memory_app, name="memory")
    app.command("mcp")(mcp_command)


_register_subcommands()


def _quiet_loop_teardown(unraisable: sys.UnraisableHookArgs) -> None:
    """An asyncio loop collected after its thread ended (the MCP client's, under load) reports a
    harmless error from `BaseEventLoop.__del__` at exit; anything else is reported as usual."""
    where = getattr(unraisable.object, "__qualname__", "")
    if where == "BaseEventLoop.__del__":
        return
    sys.__unraisablehook__(unraisable)


def _stop_as_interrupt(signum: int, _frame: object) -> None:
    """A scheduler's stop (SIGTERM) or a closed terminal (SIGHUP) ends the run as Ctrl-C does:
    checkpoints kept, one line naming `investigate resume ID`, exit 130."""
    raise KeyboardInterrupt


def main(started: float | None = None) -> None:
    """The command line in this process. `started` (a `time.monotonic()`) is when the command began,
    for the run's stats: the `investigate` entry point's clock before its imports, or the warm
    helper's client's. The terminal is read now (colours, width): the warm helper's child is handed
    its terminal after this module was imported."""
    from sandbox.hardening import no_dumps
    from sandbox.loops import close_idle_loops

    global program_started, err
    program_started = started
    err = Console(stderr=True, soft_wrap=True)
    no_dumps()  # kernel code running as this user cannot read our environment (the API key)
    library_logs()
    sys.unraisablehook = _quiet_loop_teardown
    try:
        app()
    finally:
        close_idle_loops()  # closed loops have nothing to report when they are collected
        gc.collect()  # collect the rest now, while the hook is ours (not at interpreter teardown)
