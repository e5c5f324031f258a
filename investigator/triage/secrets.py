"""Keeping notify secrets out of everything the job prints or stores (digest, logs, SQLite).

Two layers: a target is shown as Apprise's own privacy form of its URL (tokens cut to their first
and last character, passwords starred), and every text written anywhere passes a redactor that
replaces each secret value read from the environment.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

MASK = "****"
_USERINFO = re.compile(r"(?<=://)([^/@:\s]*):([^/@\s]+)@")


class Redactor:
    """Replaces known secret values in any text with `****`."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        # longest first, so a secret that contains another is masked whole
        self.secrets = sorted({s for s in secrets or [] if len(s) >= 4}, key=len, reverse=True)

    def add(self, *values: str) -> None:
        self.secrets = sorted({*self.secrets, *(v for v in values if len(v) >= 4)}, key=len, reverse=True)

    def __call__(self, text: str) -> str:
        for s in self.secrets:
            text = text.replace(s, MASK)
        return _USERINFO.sub(lambda m: f"{m.group(1)}:{MASK}@", text)


def display_target(url: str) -> str:
    """The URL as it may be shown: Apprise's privacy form without its query string (which holds
    tokens for some services); a URL Apprise cannot read shows only its scheme."""
    try:
        import apprise

        plugin = apprise.Apprise.instantiate(url)
        if plugin is not None:
            return str(plugin.url(privacy=True)).split("?", 1)[0]
    except Exception:  # an odd URL must never put its secret in the digest
        pass
    scheme = urlsplit(url).scheme or "unknown"
    return f"{scheme}://{MASK}"
