"""`investigate warm status|stop`: see and stop this user's warm helpers (`investigator.warm`)."""

from __future__ import annotations

import json
import time
from typing import Annotated

import typer

from investigator.warm.client import ask, helpers

app = typer.Typer(
    add_completion=False,
    help="The background helper that answers investigations from a terminal in interactive time.",
)


@app.command("status")
def status(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Every helper of this user that answers: its process, runs served, whether a warm worker waits."""
    found = helpers()
    if as_json:
        typer.echo(json.dumps([{"socket": str(path), **info} for path, info in found]))
        return
    if not found:
        typer.echo("no warm helper is running (one starts with the next investigation from a terminal)")
        return
    for path, info in found:
        age = time.time() - float(info.get("started", time.time()))
        worker = "ready" if info.get("ready") else "warming up"
        typer.echo(
            f"pid {info.get('pid')}: up {age:.0f}s, {info.get('served', 0)} run(s) served, "
            f"{info.get('running', 0)} running, worker {worker} ({path})"
        )


@app.command("stop")
def stop() -> None:
    """Stop every helper of this user (the next investigation from a terminal starts one again)."""
    found = helpers()
    for path, _ in found:
        ask(path, "stop")
    typer.echo(f"stopped {len(found)} helper(s)")
