"""`python -m sandbox`: the sandbox MCP server over stdio (default) or streamable HTTP.

Over stdio nothing but MCP messages reaches stdout: logs go to stderr, and while serving the SDK
points fd 1 at stderr so stray prints (ours, a library's, a kernel's) miss the wire.
Over HTTP the server binds 127.0.0.1, checks `Host` and `Origin`, and requires a bearer token
(`INVESTIGATOR_SANDBOX_TOKEN`, or a fresh one printed to stderr); workspaces stay under `--root`
and data files can be mounted only from `--data-root` folders.
"""

from __future__ import annotations

import argparse
import hmac
import logging
import os
import secrets
import signal
import sys
from pathlib import Path
from typing import Any

TOKEN_ENV = "INVESTIGATOR_SANDBOX_TOKEN"


class BearerAuth:
    """ASGI middleware: every request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain"), (b"www-authenticate", b"Bearer")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing or wrong bearer token"})
                return
        await self.app(scope, receive, send)


def http_app(mcp: Any, host: str, port: int, token: str, origins: list[str]) -> Any:
    """The streamable-HTTP app with Host/Origin checks and bearer auth in front."""
    from mcp.server.transport_security import TransportSecuritySettings

    local = ["127.0.0.1", "localhost", "[::1]"]
    hosts = [*{host, *local}]
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:{port}" for h in hosts] + hosts,
        allowed_origins=[f"http://{h}:{port}" for h in hosts] + origins,
    )
    app = mcp.streamable_http_app(transport_security=security, host=host)
    return BearerAuth(app, token)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m sandbox", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--backend", choices=["local", "docker"], default=os.environ.get("INVESTIGATOR_SANDBOX", "local")
    )
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
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
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--warm-workspace", type=Path, help="stdio, local backend: start the first session's kernel at once"
    )
    args = parser.parse_args(argv)
    warm = {}
    if args.warm_workspace and args.backend == "local" and args.transport == "stdio":
        from sandbox.sessions import prewarm  # before the MCP SDK import below, so the two overlap

        warm[args.warm_workspace.resolve()] = prewarm(args.warm_workspace.resolve())
    from sandbox.server import build_server

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
        args.backend, args.root, confine=remote, data_roots=args.data_root, warm=warm
    )
    try:
        if args.backend == "docker":
            try:  # sweep orphans of crashed runs now; a missing daemon is create_session's error
                registry.docker()
            except RuntimeError as exc:
                logging.getLogger("sandbox").warning("%s", exc)
        if args.transport == "stdio":
            mcp.run("stdio")
        else:
            serve_http(mcp, args)
    finally:
        registry.close_all()


def serve_http(mcp: Any, args: argparse.Namespace) -> None:
    import uvicorn

    token = os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(32)
    if not os.environ.get(TOKEN_ENV):
        print(f"bearer token: {token}", file=sys.stderr, flush=True)
    app = http_app(mcp, args.host, args.port, token, args.allow_origin)
    print(f"serving MCP on http://{args.host}:{args.port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
