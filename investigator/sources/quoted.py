"""A driver's message without the data's values in it.

An engine quotes what it could not read (`Could not convert string 'HOME=/root ...' to INT32`,
`invalid input syntax for type integer: "s3cret"`): a query that reads a file, or a column of
secrets, would get the content back inside the error. Every quoted fragment of a driver's message
is masked unless the person asking wrote it themselves (the query text, the table name).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["MASK", "without_values"]

MASK = "…"
_QUOTED = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|'[^']*$|\"[^\"]*$")


def without_values(text: str, known: Iterable[str | None] = ()) -> str:
    """`text` with every quoted fragment ('...' or "...", or one left open at the end) replaced by
    a quoted `MASK`, unless its content is in one of `known` (what the asker wrote)."""
    written = [k for k in known if k]

    def masked(m: re.Match[str]) -> str:
        fragment = m.group(0)
        quote, inner = fragment[0], fragment[1:].removesuffix(fragment[0]) if len(fragment) > 1 else ""
        if inner and any(inner in k for k in written):
            return fragment
        return f"{quote}{MASK}{quote}"

    return _QUOTED.sub(masked, text)
