"""What an MCP answer may carry of the data: values bounded and marked as data.

A report's segments and tables hold the data's own values, and a probe planted 3,000-character
values, terminal escape codes and "SYSTEM:" text in a dimension: they reached the client verbatim.
Every segment's names and values are written as the headline and the prompt write them
(`fmt.value`: a plain label as is, anything else quoted, cut to 60 characters, without control
characters); every other text loses its control characters (newlines and tabs kept) and is cut
at `TEXT_MAX`. Only the answer is bounded: the run's own files keep what the data said.
"""

from __future__ import annotations

import re
from typing import Any

from investigator.fmt import value

__all__ = ["TEXT_MAX", "bounded"]

TEXT_MAX = 4_000  # characters of any one text in an answer (a conclusion is a few hundred)
SEGMENTS = {"segment", "renamed_to", "concentrated_in"}  # keys whose value is a segment {dim: value}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def bounded(answer: Any, key: str = "") -> Any:
    """`answer` (a JSON-ready value) with every segment marked and every text bounded."""
    if isinstance(answer, dict):
        if key in SEGMENTS:
            return {value(k): value(v) for k, v in answer.items()}
        return {k: bounded(v, k) for k, v in answer.items()}
    if isinstance(answer, list):
        return [bounded(v, key) for v in answer]
    if isinstance(answer, str):
        text = _CONTROL.sub("", answer)
        return text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1] + "…"
    return answer
