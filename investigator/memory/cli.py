"""`investigate facts ...` and `investigate memory ...`: people review what the agent proposed."""

from __future__ import annotations

import typer

facts_app = typer.Typer(
    add_completion=False,
    help="Review facts the agent proposed; only approved facts enter prompts.",
)
memory_app = typer.Typer(add_completion=False, help="Search, compact and forget memories of past runs.")
