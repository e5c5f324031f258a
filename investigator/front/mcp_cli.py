"""`investigate mcp`: serve the product over MCP, on stdio (what desktop assistants start) or on
streamable HTTP behind the sandbox server's own checks (`sandbox.http`: bearer token, Host and
Origin). Light to import: the SDK loads when the command runs.

The runs folder and the memory home are this server's settings (flags, `INVESTIGATOR_RUNS_DIR`,
`INVESTIGATOR_HOME`, the project's config), resolved once at start: a client names runs by id and
never picks a folder. Over stdio the client is the user who started the server and names data as
on the command line; over HTTP it is whoever holds the token, so files come only from under the
data roots (the working directory by default) and connections only from the server's environment
(`env:VAR`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

TOKEN_ENV = "INVESTIGATOR_MCP_TOKEN"
DEFAULT_PORT = 8766  # the sandbox server's is 8765: both may run on one host
MAX_RUNS = 2  # investigations at once: each is a kernel and a few hundred MB; 2 cores run 2 well
MAX_SESSIONS = 32  # open MCP sessions over HTTP: beyond, a new one is refused (503)
IDLE_TIMEOUT_S = 600.0  # an MCP session unused this long is closed (the SDK's own default is 30 min)
MAX_BODY_BYTES = 1_000_000  # one request's body: every argument is far shorter than this


def mcp_command(
    ctx: typer.Context,
    transport: Annotated[str, typer.Option(help="stdio (default) or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP: the address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP: the port.")] = DEFAULT_PORT,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(help="HTTP: a Host name clients may use besides loopback (repeatable)."),
    ] = None,
    allow_origin: Annotated[
        list[str] | None, typer.Option(help="HTTP: an extra Origin allowed (repeatable).")
    ] = None,
    runs_dir: Annotated[Path | None, typer.Option(help="Where run folders go (default ./runs).")] = None,
    home: Annotated[
        Path | None, typer.Option(help="The project's memory folder (default ./.investigator).")
    ] = None,
    data_root: Annotated[
        list[Path] | None,
        typer.Option(
            help="Data files and triage configs only from under this folder (repeatable); over HTTP "
            "the working directory unless given, over stdio anywhere unless given."
        ),
    ] = None,
    semantic_manifest: Annotated[
        Path | None,
        typer.Option(
            help="A dbt semantic manifest (or dbt project folder) whose metrics clients may ask for by "
            "name; the server's owner names it, a client never names a file."
        ),
    ] = None,
    max_runs: Annotated[
        int,
        typer.Option(min=1, help="Investigations at once; as many more wait, any beyond are refused."),
    ] = MAX_RUNS,
    max_sessions: Annotated[
        int, typer.Option(min=1, help="HTTP: open MCP sessions at most; a new one beyond is refused.")
    ] = MAX_SESSIONS,
    idle_timeout: Annotated[
        float, typer.Option(min=1, help="HTTP: seconds an MCP session may stay unused before it is closed.")
    ] = IDLE_TIMEOUT_S,
) -> None:
    """Serve investigate, describe_data, get_report, list_runs, resume, triage and facts_list over
    MCP. Over HTTP a bearer token is required: INVESTIGATOR_MCP_TOKEN, else a fresh one printed to
    stderr."""
    import logging
    import sys

    from investigator.config import load_settings
    from investigator.errors import UserError

    given = ctx.find_root().obj or {}  # `investigate --runs-dir X mcp` as `investigate mcp --runs-dir X`
    runs_dir, home = runs_dir or given.get("runs_dir"), home or given.get("home")
    if transport not in ("stdio", "http"):
        typer.echo(f"error: --transport {transport!r} is not one of stdio, http", err=True)
        raise typer.Exit(2)
    try:
        settings = load_settings(runs_dir=runs_dir, home=home)
    except UserError as e:
        typer.echo(f"error: {e}", err=True)
        raise typer.Exit(2) from None
    logging.basicConfig(
        stream=sys.stderr, level=logging.WARNING, format="%(asctime)s mcp %(levelname)s %(message)s"
    )
    from investigator.front.mcp_server import build_server
    from investigator.front.mcp_tools import Place, semantic_catalogue

    roots = [p.resolve() for p in data_root or []] or ([Path.cwd()] if transport == "http" else None)
    try:
        catalogue = semantic_catalogue(semantic_manifest) if semantic_manifest else []
    except UserError as e:
        typer.echo(f"error: --semantic-manifest: {e}", err=True)
        raise typer.Exit(2) from None
    place = Place(
        runs_dir=settings.runs_dir.resolve(),
        home=settings.home.resolve(),
        data_roots=roots,
        urls=transport == "stdio",  # over HTTP, only the connections the server's environment holds
        max_runs=max_runs,
        semantic_manifest=semantic_manifest.resolve() if semantic_manifest else None,
        semantic_metrics=catalogue,
    )
    mcp, jobs = build_server(place)
    try:
        if transport == "stdio":
            mcp.run("stdio")
        else:
            _serve_http(mcp, host, port, allow_host or [], allow_origin or [], max_sessions, idle_timeout)
    except KeyboardInterrupt:
        pass
    finally:
        jobs.stop_all()  # each run stops at its next iteration, its kernel shut down


def _serve_http(
    mcp: object,
    host: str,
    port: int,
    allow_hosts: list[str],
    origins: list[str],
    max_sessions: int,
    idle_timeout_s: float,
) -> None:
    from sandbox.http import http_app, serve, serving_token

    app = http_app(
        mcp, host, port, serving_token(TOKEN_ENV), origins, allow_hosts, idle_timeout_s=idle_timeout_s,
        max_sessions=max_sessions, max_body_bytes=MAX_BODY_BYTES,
    )  # fmt: skip
    serve(app, host, port, allow_hosts, "can read the runs and start investigations")
