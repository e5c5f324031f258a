"""`investigate triage`: the scheduled job's command line.

Exit codes: 0 the job ran (anomalies or not), 3 some investigations (or metric scans) failed,
2 a bad config (one line naming the key), 1 the job could not run (locked, nothing readable).
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from investigator.terminal import cells, text

if TYPE_CHECKING:
    from investigator.triage.job import Outcome

app = typer.Typer(
    add_completion=False, help="Scan many metrics, investigate the anomalous ones, notify once."
)
err = Console(stderr=True, soft_wrap=True)


@app.callback(invoke_without_command=True)
def triage(
    config: Annotated[Path, typer.Option("--config", help="The triage YAML (see docs/triage.md).")],
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the digest's JSON here.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Scan and print what is flagged; investigate, notify nothing.")
    ] = False,
    log_format: Annotated[
        str, typer.Option("--log-format", help="text or json (JSON lines on stderr).")
    ] = "text",
    end: Annotated[
        str | None,
        typer.Option("--end", help="Last day of the window (a day, month, `yesterday`); overrides `end:`."),
    ] = None,
) -> None:
    """Scan every metric in CONFIG, investigate the ones that moved abnormally, notify once."""
    from investigator.errors import InvestigatorError, UserError
    from investigator.triage.config import expand_targets, load_config, with_end
    from investigator.triage.job import COULD_NOT_RUN, run_triage
    from investigator.triage.logs import configure, unconfigure
    from investigator.triage.secrets import Redactor

    as_json = log_format == "json"
    if log_format not in ("text", "json"):
        _fail(2, f"--log-format {log_format!r} is not one of text, json")
    try:
        cfg = load_config(config)
        if end is not None:
            cfg = with_end(cfg, end)
        _, secrets = expand_targets(cfg.notify)
    except UserError as e:
        _fail(2, str(e), as_json)
    handler = configure("json" if as_json else "text", Redactor(secrets))
    try:
        outcome = run_triage(cfg, dry_run=dry_run, json_path=json_path)
    except UserError as e:
        _fail(2, Redactor(secrets)(str(e)), as_json)
    except InvestigatorError as e:
        _fail(COULD_NOT_RUN, Redactor(secrets)(str(e)), as_json)
    except Exception as e:  # a scheduler reads one line, not a traceback
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        _fail(COULD_NOT_RUN, Redactor(secrets)(f"{type(e).__name__}: {first}"), as_json)
    finally:
        unconfigure(handler)
    _print(outcome, quiet_stderr=as_json)
    raise typer.Exit(outcome.exit_code)


def _fail(code: int, message: str, as_json: bool = False) -> None:
    """One line on stderr: plain for people, or a JSON line (`level: error`) with `--log-format
    json`, so a log collector never meets a line it cannot parse."""
    if as_json:
        line = {"ts": datetime.now(UTC).isoformat(timespec="milliseconds"), "level": "error",
                "event": "triage failed", "error": message, "exit_code": code}  # fmt: skip
        sys.stderr.write(json.dumps(line) + "\n")
        raise typer.Exit(code)
    label = "error: " if code == 2 else "failed: "
    err.print(text(label, style="bold red") + text(message), highlight=False)
    raise typer.Exit(code)


def _print(outcome: Outcome, quiet_stderr: bool = False) -> None:
    """The digest on stdout; without a terminal (cron), lines as long as they need, never cut at
    80 columns. With JSON logs, stderr holds only JSON lines (the digest's folder is in them)."""
    from investigator.triage.digest import headline, rows

    out = Console(soft_wrap=True)
    if not out.is_terminal:
        out = Console(soft_wrap=True, width=100_000)
    out.print(text(outcome.title, style="bold"))
    out.print(text(headline(outcome.digest)))
    table = Table(show_edge=False)
    for name in ("metric", "segment", "change", "score", "verdict", "top cause"):
        table.add_column(name, overflow="fold")
    for r in rows(outcome.digest):
        table.add_row(*cells(r.metric, r.segment, r.change, r.score, r.verdict, r.cause))
    if table.row_count:
        out.print(table)
    for s in outcome.digest.scanned:
        if s.error:
            out.print(text(f"could not scan {s.metric}: {s.error}", style="red"))
    for n in outcome.digest.notifications:
        out.print(text(f"notify {n.target}: {'sent' if n.ok else f'failed ({n.error})'}"))
    if outcome.folder is not None and not quiet_stderr:
        err.print(text(f"digest: {outcome.folder / 'digest.html'}"))
