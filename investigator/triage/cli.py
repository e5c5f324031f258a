"""`investigate triage`: the scheduled job's command line."""

from __future__ import annotations

import typer

app = typer.Typer(
    add_completion=False, help="Scan many metrics, investigate the anomalous ones, notify once."
)
