"""What a `--data` value names: a local file, a connection URL, or `env:VAR` holding either.

The password never leaves this module in text meant for people or disk: `redact` is what runs, logs
and messages store, and `scrub` takes the secret out of any message a driver wrote.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, unquote_plus, urlsplit

from investigator.errors import ConfigError

ENV_PREFIX = "env:"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def is_url(data: str) -> bool:
    """A connection URL or an `env:` reference (a file path otherwise; `file://` counts as a file)."""
    if data.startswith(ENV_PREFIX):
        return True
    m = _SCHEME.match(data)
    return m is not None and m.group(1).lower() != "file"


def expand(data: str) -> str:
    """The URL itself: `env:VAR` read from the environment (only here, on the host)."""
    if not data.startswith(ENV_PREFIX):
        return data
    name = data[len(ENV_PREFIX) :].strip()
    value = os.environ.get(name, "").strip()
    if not name or not value:
        raise ConfigError(f"environment variable {name or '(empty name)'} is not set: export it with the URL")
    return value


def scheme(url: str) -> str:
    """The backend a URL names (`postgresql` is `postgres`)."""
    m = _SCHEME.match(url)
    name = m.group(1).lower() if m else "file"
    return "postgres" if name == "postgresql" else name


def password(url: str) -> str | None:
    if scheme(url) == "spark":
        return None
    try:
        return urlsplit(url).password
    except ValueError:
        return None


def redact(data: str) -> str:
    """What may be stored or shown: `env:VAR` as written, a URL without its password (and without
    query parameters, where some drivers take tokens)."""
    if data.startswith(ENV_PREFIX) or not is_url(data) or scheme(data) == "spark":
        return data
    try:
        parts = urlsplit(data)
        host = parts.hostname or ""
    except ValueError:
        return f"{scheme(data)}://(unparsable URL)"
    if parts.port:
        host = f"{host}:{parts.port}"
    user = f"{parts.username}@" if parts.username else ""
    return f"{parts.scheme}://{user}{host}{parts.path}"  # `duckdb:///abs/path` keeps its three slashes


def scrub(text: str, url: str) -> str:
    """A message with the URL's password and query string taken out, wherever they appear."""
    out = text.replace(url, redact(url))
    secret = password(url)
    for form in {secret, unquote(secret), unquote_plus(secret)} if secret else ():
        out = out.replace(form, "***")
    try:
        query = urlsplit(url).query
    except ValueError:
        query = ""
    return out.replace(query, "***") if query else out
