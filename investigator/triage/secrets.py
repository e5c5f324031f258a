"""Keeping notify secrets out of everything the job prints or stores (digest, logs, SQLite).

Two layers: a target is shown as Apprise's own privacy form of its URL (tokens cut to their first
and last character, passwords starred), and every text written anywhere passes a redactor that
replaces each secret value read from the environment.
"""

from __future__ import annotations

import html
import json
import re
from urllib.parse import unquote, unquote_plus, urlsplit

MASK = "****"
MIN_SECRET = 4  # shorter values (a port, "true") would mask half of every line
_USERINFO = re.compile(r"(?<=://)([^/@:\s]*):([^/@\s]+)@")


class Redactor:
    """Replaces known secret values in any text with `****`, in every form a notifier, a URL, JSON
    or HTML may have given them: raw, percent-encoded (any case, any set of characters left as
    they are, `+` for a space), JSON- or HTML-escaped, and decoded (a value that was itself
    percent-encoded in the environment)."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        self.secrets: list[str] = []
        self._pattern: re.Pattern[str] | None = None
        self.add(*(secrets or []))

    def add(self, *values: str) -> None:
        forms = {f for v in values for f in (v, unquote(v), unquote_plus(v)) if len(f) >= MIN_SECRET}
        # longest first, so a secret that contains another is masked whole
        self.secrets = sorted({*self.secrets, *forms}, key=len, reverse=True)
        self._pattern = re.compile("|".join(_any_form(s) for s in self.secrets)) if self.secrets else None

    def __call__(self, text: str) -> str:
        if self._pattern is not None:
            text = self._pattern.sub(MASK, text)
        return _USERINFO.sub(lambda m: f"{m.group(1)}:{MASK}@", text)


def _any_form(secret: str) -> str:
    """A pattern for `secret` with each character as itself or any of its escapes."""
    out = []
    for ch in secret:
        forms = {re.escape(ch), re.escape(json.dumps(ch)[1:-1]), re.escape(html.escape(ch))}
        forms.add("".join(f"%(?i:{b:02x})" for b in ch.encode()))
        if ch == " ":
            forms.add(r"\+")
        out.append("(?:" + "|".join(sorted(forms, key=len, reverse=True)) + ")")
    return "".join(out)


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
