"""`investigate facts ...` and `investigate memory ...`: people review what the agent proposed.

Imported when the CLI starts: the embedding model and the store load inside the commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

facts_app = typer.Typer(
    add_completion=False,
    help="Review facts the agent proposed; only approved facts enter prompts.",
)
memory_app = typer.Typer(add_completion=False, help="Search, compact and forget memories of past runs.")

Home = Annotated[
    Path | None,
    typer.Option(help="The project's memory folder (default ./.investigator, or INVESTIGATOR_HOME)."),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _home(ctx: typer.Context, home: Path | None) -> Path:
    """This command's --home, else the main command's, else the settings'."""
    from investigator.memory.api import home_of

    root = ctx.find_root().obj or {}
    return home_of(home or root.get("home"))


def _fail(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _warn(warnings: list[str]) -> None:
    for w in warnings:
        typer.echo(f"warning: {w}", err=True)


@facts_app.command("list")
def facts_list(ctx: typer.Context, home: Home = None, as_json: AsJson = False) -> None:
    """Approved facts (the ledger) and the proposals waiting for review."""
    from investigator.memory.api import list_facts

    view = list_facts(_home(ctx, home))
    _warn(view.warnings)
    if as_json:
        typer.echo(view.model_dump_json(indent=2, exclude={"warnings"}))
        return
    from rich.console import Console
    from rich.table import Table

    from investigator.memory.ledger import tag, text_of
    from investigator.terminal import cells

    table = Table(title="Facts")  # tag and fact as the ledger line has them: what approval writes
    for col in ("id", "status", "topic", "tag", "fact", "run"):
        table.add_column(col, overflow="fold")
    for p in view.pending:
        table.add_row(*cells(p.id, "pending", p.topic, tag(p), text_of(p), p.run_id or ""))
    for f in view.unapproved:
        table.add_row(*cells(f.id, "unapproved", f.topic, tag(f), text_of(f), f.run_id or ""))
    for f in view.approved:
        table.add_row(*cells(f.id, "approved", f.topic, tag(f), text_of(f), f.run_id or ""))
    Console().print(table)
    if view.pending or view.unapproved:
        typer.echo("Approve with `investigate facts approve ID`, or review each: `investigate facts review`.")


@facts_app.command("review")
def facts_review(ctx: typer.Context, home: Home = None) -> None:
    """Go through pending facts one by one: approve, reject or skip each."""
    from investigator.memory.api import approve_fact, list_facts, reject_fact
    from investigator.memory.ledger import tag, text_of, visible

    h = _home(ctx, home)
    view = list_facts(h)
    _warn(view.warnings)
    for f in view.unapproved:  # in the ledger, not approved: written by hand, or not by a person
        typer.echo(f"\n{f.id} [{f.kind}] {f.text}\n  in facts/{f.topic}.md without an approval mark")
        answer = typer.prompt("approve or skip? [a/s]", default="s").strip().lower()[:1]
        if answer == "a":
            approve_fact(f.id, None, h)
            typer.echo(f"approved {f.id} in facts/{f.topic}.md")
    if not view.pending:
        typer.echo("No facts waiting for review.")
        return
    for p in view.pending:
        typer.echo(f"\n{p.id} [{tag(p)}] {text_of(p)}")  # the ledger line approval writes
        every = "" if p.metrics else "; every metric"
        typer.echo(f"  topic: {visible(p.topic)}{every}; run: {visible(p.run_id or '-')}")
        if p.evidence:
            typer.echo(f"  evidence: {visible(p.evidence)}")
        answer = typer.prompt("approve, reject, skip or quit? [a/r/s/q]", default="s").strip().lower()[:1]
        if answer == "q":
            break
        if answer == "a":
            topic = typer.prompt("topic (the ledger file)", default=p.topic)
            fact = approve_fact(p.id, topic, h)
            typer.echo(f"approved {fact.id} into facts/{fact.topic}.md")
        elif answer == "r":
            reject_fact(p.id, h)
            typer.echo(f"rejected {p.id}")


@facts_app.command("approve")
def facts_approve(
    ctx: typer.Context,
    fact_id: str,
    topic: Annotated[str | None, typer.Option(help="The ledger file to add it to.")] = None,
    home: Home = None,
) -> None:
    """Approve a pending fact (or a ledger line written by hand): it enters the context of every
    later run it is relevant to."""
    from investigator.memory.api import approve_fact
    from investigator.memory.approval import KeyProblem

    try:
        fact = approve_fact(fact_id, topic, _home(ctx, home))
    except KeyError as e:
        _fail(str(e.args[0]))
        return
    except KeyProblem as e:
        _fail(str(e))
        return
    from investigator.memory.ledger import tag, text_of

    typer.echo(f"approved {fact.id} into facts/{fact.topic}.md: [{tag(fact)}] {text_of(fact)}")


@facts_app.command("reject")
def facts_reject(ctx: typer.Context, fact_id: str, home: Home = None) -> None:
    """Reject a pending fact: it never enters a prompt and is not proposed again."""
    from investigator.memory.api import reject_fact

    try:
        proposal = reject_fact(fact_id, _home(ctx, home))
    except KeyError as e:
        _fail(str(e.args[0]))
        return
    from investigator.memory.ledger import text_of

    typer.echo(f"rejected {proposal.id}: {text_of(proposal)}")


@memory_app.command("search")
def memory_search(
    ctx: typer.Context,
    text: str,
    k: Annotated[int, typer.Option("-k", "--top", min=1, help="How many memories.")] = 10,
    metric: Annotated[str | None, typer.Option(help="Only memories about this metric.")] = None,
    home: Home = None,
    as_json: AsJson = False,
) -> None:
    """Memories of past runs nearest TEXT, most relevant first."""
    from investigator.memory.api import search_memory

    found = search_memory(text, k, metric, _home(ctx, home))
    if as_json:
        rows = [m.model_dump(mode="json", exclude={"segment"}) | {"segment": m.segment} for m in found]
        typer.echo(json.dumps(rows, indent=2))
        return
    if not found:
        typer.echo("No memories.")
    for m in found:
        typer.echo(f"{m.score:.3f}  {m.created:%Y-%m-%d}  run {m.run_id}  ({m.type})  {m.text}")


@memory_app.command("compact")
def memory_compact(
    ctx: typer.Context,
    older_than: Annotated[float, typer.Option(min=0, help="Summarise memories older than this (days).")] = 30,
    home: Home = None,
) -> None:
    """Summarise old memories (about 10 into one chunk of ~1,600 characters) and drop the originals."""
    from investigator.memory.api import compact_memory

    summarised, made = compact_memory(older_than, _home(ctx, home))
    typer.echo(f"summarised {summarised} memories into {made} chunks")


@memory_app.command("forget")
def memory_forget(ctx: typer.Context, run_id: str, home: Home = None) -> None:
    """Remove every memory of a run (and summaries that quote it)."""
    from investigator.memory.api import forget_run

    n = forget_run(run_id, _home(ctx, home))
    typer.echo(f"forgot {n} memories of run {run_id}")
