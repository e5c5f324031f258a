"""`python -m sandbox`: the sandbox MCP server over stdio (default) or streamable HTTP.

Over stdio nothing but MCP messages reaches stdout: logs go to stderr, and while serving the SDK
points fd 1 at stderr so stray prints (ours, a library's, a kernel's) miss the wire.
Over HTTP the server binds 127.0.0.1, checks `Host` and `Origin`, and requires a bearer token
(`INVESTIGATOR_SANDBOX_TOKEN`, or a fresh one printed to stderr); workspaces stay under `--root`
and data files can be mounted only from `--data-root` folders. A server reached by another name
than loopback (`--host 0.0.0.0`) answers only the names given with `--allow-host`.

The operator's flags are the policy: sessions get this server's backend, and ask at most for the
network, memory, CPUs, pids and images the flags allow (`--allow-network`, `--max-memory`,
`--max-cpus`, `--max-pids`, `--image`, `--allow-image`); a client may ask for less. The server runs
at most `--max-sessions` sessions, closes one left unused for `--idle-timeout` seconds (over HTTP,
30 minutes unless set; a client that went away never says so) and, over HTTP, those an MCP session
made when it ends; no execution runs longer than `--max-timeout` seconds.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from sandbox.http import http_app, serve, serving_token

TOKEN_ENV = "INVESTIGATOR_SANDBOX_TOKEN"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=["local", "docker"], default=os.environ.get("INVESTIGATOR_SANDBOX", "local")
    )
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1", help="the address to bind (HTTP)")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="over HTTP, a Host name clients may use besides loopback (repeatable); needed when "
        "binding beyond loopback, e.g. --host 0.0.0.0 --allow-host sandbox.internal",
    )
    parser.add_argument(
        "--allow-origin", action="append", default=[], help="an extra Origin allowed over HTTP (repeatable)"
    )
    parser.add_argument("--root", type=Path, help="where session workspaces are made")
    parser.add_argument(
        "--data-root",
        type=Path,
        action="append",
        default=[],
        help="over HTTP, data files may be mounted only from under these folders",
    )
    limits = parser.add_argument_group("session ceilings (a client may ask for less, never more)")
    limits.add_argument("--allow-network", action="store_true", help="let sessions ask for network=true")
    limits.add_argument("--max-memory", default="2g", help="memory per kernel, the default too (2g)")
    limits.add_argument("--max-cpus", type=float, default=1.0, help="CPUs per kernel, the default too (1)")
    limits.add_argument("--max-pids", type=int, default=256, help="processes per kernel, the default too")
    limits.add_argument("--image", help="the sessions' default Docker image (never pulled)")
    limits.add_argument(
        "--allow-image",
        action="append",
        default=[],
        metavar="IMAGE",
        help="another image sessions may ask for",
    )
    server = parser.add_argument_group("the server's own limits")
    server.add_argument("--max-sessions", type=int, default=8, help="sessions at once; more are refused (8)")
    server.add_argument(
        "--idle-timeout",
        type=float,
        help="close a session unused for this many seconds (over HTTP 1800 unless set; 0: never)",
    )
    server.add_argument(
        "--max-timeout", type=float, default=600.0, help="the longest an execution may run, in seconds (600)"
    )
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--warm-workspace", type=Path, help="stdio, local backend: start the first session's kernel at once"
    )
    args = parser.parse_args(argv)
    from sandbox.hardening import no_dumps

    no_dumps()  # kernel code running as this user cannot read this process's environment
    from sandbox.policy import DEFAULT_IMAGE, Policy

    try:
        policy = Policy(
            backend=args.backend,
            allow_network=args.allow_network,
            max_memory=args.max_memory,
            max_cpus=args.max_cpus,
            max_pids=args.max_pids,
            images=list(dict.fromkeys([args.image or DEFAULT_IMAGE, *args.allow_image])),
            max_sessions=args.max_sessions,
            idle_timeout_s=_idle_timeout(args),
            max_timeout_s=args.max_timeout,
        )
    except ValueError as exc:
        parser.error(str(exc))
    warm = {}
    if args.warm_workspace and args.backend == "local" and args.transport == "stdio":
        from sandbox.sessions import prewarm  # before the MCP SDK import below, so the two overlap

        warm[args.warm_workspace.resolve()] = prewarm(args.warm_workspace.resolve())
    from sandbox.loops import close_idle_loops
    from sandbox.server import build_server, close_idle_sessions

    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s sandbox %(levelname)s %(message)s",
    )
    # SIGTERM ends the process through SystemExit, so lifespan and atexit cleanup still run
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    # stdio: the client is the user who started us; HTTP: a token holder, kept to our folders
    remote = args.transport == "http"
    mcp, registry = build_server(
        args.backend, args.root, confine=remote, data_roots=args.data_root, warm=warm, policy=policy
    )
    sweeping = close_idle_sessions(registry)
    try:
        if args.backend == "docker":
            try:  # sweep orphans of crashed runs now; a missing daemon is create_session's error
                registry.docker()
            except RuntimeError as exc:
                logging.getLogger("sandbox").warning("%s", exc)
        if args.transport == "stdio":
            mcp.run("stdio")
        else:
            serve_http(mcp, args, registry)
    finally:
        sweeping.set()
        registry.close_all()
        close_idle_loops()  # jupyter_client's worker-thread loops, else __del__ noise on the CLI's stderr


def _idle_timeout(args: argparse.Namespace) -> float | None:
    """Seconds before an unused session is closed: the flag (0: never), else 30 minutes over HTTP,
    where clients come and go, and never over stdio, where the client's end ends the server."""
    if args.idle_timeout is None:
        return 1800.0 if args.transport == "http" else None
    return args.idle_timeout or None


def serve_http(mcp: Any, args: argparse.Namespace, registry: Any) -> None:
    token = serving_token(TOKEN_ENV)
    app = http_app(
        mcp,
        args.host,
        args.port,
        token,
        args.allow_origin,
        args.allow_host,
        on_session_end=registry.close_owned_by,
        idle_timeout_s=registry.policy.idle_timeout_s,
    )
    serve(app, args.host, args.port, args.allow_host, "gets kernels")


if __name__ == "__main__":
    main()
