"""How long, and how deeply nested, any text a person or a client hands us may be.

Checked before anything parses it, and refused in one line that never quotes it back: sixty
nested parentheses in a `--filter` took the parser two minutes and ended in a 1,160-line
RecursionError, and a 10 MB `data` argument came back to the client (and the server's log) whole.
"""

from __future__ import annotations

from collections.abc import Mapping

from investigator.errors import UserError

__all__ = ["ARGUMENT_CHARS", "MAX_DEPTH", "MAX_QUERY_CHARS", "check_lengths", "too_deep"]

MAX_DEPTH = 40  # nested parentheses a condition or a query may hold (sqlglot recurses per level)
MAX_QUERY_CHARS = 20_000  # a query or a condition longer than this is refused before it is parsed
# the longest each argument may be; anything not named here: DEFAULT_CHARS
ARGUMENT_CHARS = {"sql": MAX_QUERY_CHARS, "filter": MAX_QUERY_CHARS, "data": 4_096, "config": 4_096,
                  "objective": 4_096}  # fmt: skip
DEFAULT_CHARS = 512


def too_deep(text: str, where: str) -> str | None:
    """Why a condition or a query is too long or too deeply nested to parse, in one line; None if
    it is neither. `where` names the flag or key it came from."""
    if len(text) > MAX_QUERY_CHARS:
        return f"{where} is {len(text):,} characters long, more than {MAX_QUERY_CHARS:,}: save it as a view"
    depth = deepest = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        deepest = max(deepest, depth)
    if deepest > MAX_DEPTH:
        return f"{where} nests parentheses {deepest} deep, more than {MAX_DEPTH}: write it flatter"
    return None


def check_lengths(arguments: Mapping[str, object], flag: str = "") -> None:
    """A `UserError` naming the first argument longer than its cap (text, or text in a list), with
    its length and never its value; `flag` prefixes its name ("--" on the command line)."""
    for name, value in arguments.items():
        texts = value if isinstance(value, list | tuple) else [value]
        cap = ARGUMENT_CHARS.get(name, DEFAULT_CHARS)
        for text in texts:
            if isinstance(text, str) and len(text) > cap:
                what = f"{flag}{name.replace('_', '-') if flag else name}"
                raise UserError(f"{what} is {len(text):,} characters long, more than {cap:,}: shorten it")
