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
from typing import Annotated, Any

import typer
from rich.console import Console

from investigator.config import load_settings
from investigator.errors import Interrupted, InvestigatorError, UserError
from investigator.files import write_atomic
from investigator.front.flags import ask
from investigator.front.live import progress
from investigator.front.question import cli_parameters, with_options
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


OUT = "Output"
EXAMPLES = """Examples:
  investigate --metric revenue --window 7d                   the demo data
  investigate --data sales.csv --metric revenue --window 4w --baseline yoy
  investigate --data env:WAREHOUSE_URL --table orders --metric revenue/orders
  investigate describe sales.csv                  what a run would read there

Exit codes: 0 concluded, 3 cut short at a limit (resume RUN_ID --more 5),
2 a mistake in the question, 1 failed, 4 the model endpoint was lost (the
run is saved), 130 interrupted.

A run writes runs/RUN_ID/ and the project's memory in ./.investigator/.
From a terminal a warm helper stays in the background for the next question
(investigate warm --help; INVESTIGATOR_WARM=0 turns it off)."""


@app.callback(invoke_without_command=True, epilog=EXAMPLES)
def main_command(
    ctx: typer.Context,
    *,
    json_path: Annotated[
        Path | None,
        typer.Option("--json", help="Write the report as JSON here (- for stdout).", rich_help_panel=OUT),
    ] = None,
    quiet: Annotated[bool, typer.Option(help="Print only the conclusion.", rich_help_panel=OUT)] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            help="Print the libraries' INFO logs too (each HTTP request to the model).", rich_help_panel=OUT
        ),
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Print the version.", rich_help_panel=OUT
        ),
    ] = False,
    **options: Any,
) -> None:
    """Investigate why METRIC moved in the last WINDOW compared with its baseline."""
    if verbose:
        library_logs(logging.INFO)
    runs_dir, home = options.get("runs_dir"), options.get("home")
    ctx.obj = {"runs_dir": runs_dir, "json_path": json_path, "quiet": quiet, "home": home}
    if ctx.invoked_subcommand is not None:
        return

    def go() -> None:
        request, settings, choice = ask(flag="--", by_owner=True, **options)
        with progress(settings.max_iterations, enabled=not quiet) as hooks:
            report = investigate(request, settings, hooks, llm=choice, started=program_started)
        _finish(report, json_path, quiet, settings.runs_dir)

    _guard(go)


with_options(main_command, cli_parameters())


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


# an example for each command's help (`investigate CMD --help`): kept here, where the commands meet
COMMAND_EXAMPLES = {
    "resume": "investigate resume 20260329-101500-a1b2c3 --more 5",
    "mcp": "investigate mcp   (stdio, for a desktop assistant)   ·   investigate mcp --transport http",
    "triage": "investigate triage --config examples/triage/triage.yaml --dry-run",
    "warm status": "investigate warm status",
    "warm stop": "investigate warm stop   (INVESTIGATOR_WARM=0 keeps it from starting again)",
    "facts list": "investigate facts list --json",
    "facts review": "investigate facts review",
    "facts approve": "investigate facts approve f-3a9c1e --topic billing",
    "facts reject": "investigate facts reject f-3a9c1e",
    "memory search": 'investigate memory search "revenue drop in FR"',
    "memory compact": "investigate memory compact",
    "memory forget": "investigate memory forget 20260329-101500-a1b2c3",
}


def _register_subcommands() -> None:
    """Each feature owns its commands in its own module (kept light to import: heavy imports happen
    inside the commands); each gets its example here."""
    from investigator.front.describe_cli import EXAMPLE, describe_command
    from investigator.front.mcp_cli import mcp_command
    from investigator.memory.cli import facts_app, memory_app
    from investigator.triage.cli import app as triage_app
    from investigator.warm.cli import app as warm_app

    def example(name: str) -> str:
        return f"Example: {COMMAND_EXAMPLES[name]}"

    app.add_typer(triage_app, name="triage", epilog=example("triage"))
    for group, sub in (("warm", warm_app), ("facts", facts_app), ("memory", memory_app)):
        app.add_typer(sub, name=group)
        for command in sub.registered_commands:
            command.epilog = example(f"{group} {command.name}")
    app.command("mcp", epilog=example("mcp"))(mcp_command)
    app.command("describe", epilog=EXAMPLE)(describe_command)
    resume_info = next(c for c in app.registered_commands if c.name == "resume")
    resume_info.epilog = example("resume")


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


def main(started: float | None = None, exits: bool = False) -> None:
    """The command line in this process. `started` (a `time.monotonic()`) is when the command began,
    for the run's stats: the `investigate` entry point's clock before its imports, or the warm
    helper's client's. The terminal is read now (colours, width): the warm helper's child is handed
    its terminal after this module was imported. `exits`: the caller ends the process at once
    after (`os._exit`), so nothing is collected at an interpreter teardown."""
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
        if not exits:  # collect the rest now, while the hook is ours (not at interpreter teardown)
            gc.collect()  # a tenth of a second after the answer is out: only when a teardown follows
