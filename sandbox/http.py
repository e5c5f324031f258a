"""The MCP servers' HTTP front: bearer token, Host and Origin checks, one place for both servers.

`python -m sandbox --transport http` (the kernel) and `investigate mcp --transport http` (the
product) put the same checks in front of the SDK's streamable-HTTP app, so a fix to one is a fix to
both: a request without the token is refused before the SDK sees it, and only the Host names and
Origins the operator allowed (loopback by default) are answered, which stops DNS rebinding.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import sys
from typing import Any

__all__ = ["BearerAuth", "SessionEnd", "http_app", "is_loopback", "serving_token"]


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


class SessionEnd:
    """ASGI middleware: when a client ends its MCP session (streamable HTTP's DELETE with its
    `mcp-session-id`, which the server accepted), `on_end` closes the kernels that session made."""

    def __init__(self, app: Any, on_end: Any) -> None:
        self.app, self.on_end = app, on_end

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        ended = dict(scope.get("headers") or []).get(b"mcp-session-id", b"").decode("latin-1")
        status = 0

        async def watch(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        await self.app(scope, receive, watch)
        if ended and 200 <= status < 300:
            import anyio.to_thread

            await anyio.to_thread.run_sync(self.on_end, ended)  # stopping kernels blocks


def _bracket(host: str) -> str:
    """An IPv6 literal as it appears in a Host header."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def is_loopback(host: str) -> bool:
    if host.strip("[]") == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def http_app(
    mcp: Any,
    host: str,
    port: int,
    token: str,
    origins: list[str],
    allow_hosts: list[str] | None = None,
    on_session_end: Any = None,
    idle_timeout_s: float | None = None,
    max_sessions: int | None = None,
    max_body_bytes: int | None = None,
) -> Any:
    """The streamable-HTTP app with Host/Origin checks and bearer auth in front. Requests must
    name a loopback host, the bound host, or one of `allow_hosts` (a wildcard bind address such
    as 0.0.0.0 is no name a client sends). `on_session_end(mcp_session_id)` is called when a
    client ends its MCP session; an MCP session idle for `idle_timeout_s` is dropped too. Beyond
    `max_sessions` open MCP sessions a new one is refused (503), and a request body over
    `max_body_bytes` is refused (413) before it is read whole."""
    from mcp.server.transport_security import TransportSecuritySettings

    local = ["127.0.0.1", "localhost", "[::1]"]
    bound = [] if host in ("0.0.0.0", "::", "") else [host]
    hosts = list(dict.fromkeys(_bracket(h) for h in [*local, *bound, *(allow_hosts or [])]))
    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:{port}" for h in hosts] + hosts,
        allowed_origins=[f"http://{h}:{port}" for h in hosts] + origins,
    )
    limits: dict[str, Any] = {} if idle_timeout_s is None else {"session_idle_timeout": idle_timeout_s}
    if max_sessions is not None:
        limits["max_sessions"] = max_sessions
    if max_body_bytes is not None:
        limits["max_request_body_size"] = max_body_bytes
    app = mcp.streamable_http_app(transport_security=security, host=host, **limits)
    if on_session_end is not None:
        app = SessionEnd(app, on_session_end)
    return BearerAuth(app, token)


def serving_token(env_var: str) -> str:
    """The bearer token from `env_var`, else a fresh one printed to stderr (never stdout, never a
    file): whoever started the server reads it there and hands it to the client."""
    token = os.environ.get(env_var) or secrets.token_urlsafe(32)
    if not os.environ.get(env_var):
        print(f"bearer token: {token}", file=sys.stderr, flush=True)
    return token


def serve(app: Any, host: str, port: int, allow_hosts: list[str], grants: str) -> None:
    """Run `app` under uvicorn, first warning on stderr when `host` is beyond loopback: anyone who
    reaches the port with the token `grants` what the server serves (kernels, runs)."""
    import uvicorn

    if not is_loopback(host):
        names = ", ".join(allow_hosts) or "none: only loopback names are answered; add --allow-host NAME"
        print(
            f"warning: binding {host} beyond loopback: anyone who can reach port {port} and holds the token "
            f"{grants}; Host names answered besides loopback: {names}",
            file=sys.stderr,
            flush=True,
        )
    print(f"serving MCP on http://{host}:{port}/mcp", file=sys.stderr, flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
