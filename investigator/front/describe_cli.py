"""`investigate describe DATA`: what a run would read there, as the MCP tool `describe_data` gives it
to an assistant (`sources.describe`), printed for a person, with the first command to try. Only
aggregates are read; no kernel starts."""

from __future__ import annotations

import shlex
from typing import Annotated

import typer

from investigator.sources.describe import DataDescription

EXAMPLE = "Example: investigate describe sales.parquet  ·  investigate describe env:DB_URL --table orders"

EVERY = {"day": "daily", "week": "weekly", "month": "monthly", "quarter": "quarterly", "year": "yearly"}


def describe_command(
    data: Annotated[
        str | None,
        typer.Argument(help="CSV or Parquet file, a connection URL or env:VAR (default: the demo data)."),
    ] = None,
    table: Annotated[str | None, typer.Option(help="With a URL: the table.")] = None,
    sql: Annotated[
        str | None, typer.Option(help="With a URL: a read-only query whose result is the data.")
    ] = None,
    metric: Annotated[
        str | None, typer.Option(help="A metric: check it, and use its configured data.")
    ] = None,
    time_column: Annotated[str | None, typer.Option(help="The date column, if not 'date'.")] = None,
    window: Annotated[
        str | None, typer.Option(help="The windows a run with this window would compare.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the description as JSON.")] = False,
) -> None:
    """The data's columns and types, the time column and grain a run would use, the date range, the
    dimensions with their number of values, the numeric measures, and the first command to try."""
    from investigator.errors import InvestigatorError, UserError
    from investigator.limits import check_lengths
    from investigator.sources.describe import describe_data

    try:
        check_lengths({"data": data, "table": table, "sql": sql, "metric": metric, "time_column": time_column,
                       "window": window}, "--")  # fmt: skip
        found = describe_data(
            data=data,
            table=table,
            sql=sql,
            metric=metric,
            time_column=time_column,
            window=window,
            by_owner=True,
        )
        if as_json:
            print(found.model_dump_json(indent=2))
        else:
            print(text(found, data, table, sql, time_column))
    except UserError as e:  # one line, as the main command says it (exit 2: the user's to fix)
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    except InvestigatorError as e:
        typer.echo(f"failed: {e}", err=True)
        raise typer.Exit(1) from None


def text(d: DataDescription, data: str | None, table: str | None, sql: str | None, asked: str | None) -> str:
    """The description as a person reads it, ending with a command that would run."""
    lines = [f"{d.data}: {d.rows:,} rows, {len(d.columns)} columns"]
    lines += [f"  {c.name:<24} {c.type}" for c in d.columns]
    if d.time_column is None:
        lines.append("time column: none found (a date column is needed: name one with --time-column)")
    else:
        step = "" if not d.grain_step or d.grain_step == 1 else f" (every {d.grain_step})"
        every = {
            "day": "daily",
            "week": "weekly",
            "month": "monthly",
            "quarter": "quarterly",
            "year": "yearly",
        }
        grain = every.get(d.grain or "", d.grain or "?")
        lines.append(f"time column: {d.time_column}, {grain}{step}, {d.first_date} to {d.last_date}")
    if d.dimensions:
        lines.append("dimensions: " + ", ".join(f"{x.name} ({x.values} values)" for x in d.dimensions))
    if d.numeric_columns:
        lines.append("numeric measures: " + ", ".join(d.numeric_columns))
    if d.metrics:
        lines.append("configured metrics: " + ", ".join(m.name for m in d.metrics))
    w = d.windows
    if w is not None and w.problem:
        lines.append(f"window {w.window}: {w.problem}")
    elif w is not None and w.current_start is not None:
        lines.append(
            f"window {w.window}: {w.current_start} to {w.current_end} vs the {w.baseline} baseline "
            f"{w.baseline_start} to {w.baseline_end}"
        )
    measure = next(iter(d.numeric_columns), None) or (d.metrics[0].name if d.metrics else None)
    if d.time_column is not None and measure is not None:
        words = ["investigate"]
        if data:
            words += ["--data", data]
        if table:
            words += ["--table", table]
        if sql:
            words += ["--sql", sql]
        words += ["--metric", measure, "--window", (w.window if w else None) or d.suggested_window or "7d"]
        if not d.time_column_given or asked:
            words += ["--time-column", d.time_column]
        lines.append("try: " + shlex.join(words))
    return "\n".join(lines)
