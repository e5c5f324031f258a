"""Which structured-output mode an endpoint enforces, found once per base URL and kept for the process.

Servers differ: OpenAI, vLLM and Ollama take `response_format: {"type": "json_schema", ...}` and
constrain decoding to it; llama.cpp's server refuses that type (HTTP 500, "Input should be 'text' or
'json_object'") but constrains `{"type": "json_object", "schema": ...}` with a grammar; some servers
take only tool calls, some only plain JSON. In `auto` the client asks the strictest mode first; an
answer of HTTP 400/422/500/501 that names the parameter it does not take (`response_format`,
`json_schema`, tools, "not supported") means "try the next mode", is never retried as an outage, and
is remembered for the endpoint: the first call of a run is the probe, and costs no generation.
"""

from __future__ import annotations

import re
import threading
from typing import ClassVar

import instructor

from investigator.llm.settings import AUTO_ORDER, Mode

__all__ = ["INSTRUCTOR_MODES", "ModeRefused", "Modes", "refusal_names_the_mode"]

INSTRUCTOR_MODES: dict[Mode, instructor.Mode] = {
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "json_object_schema": instructor.Mode.JSON,  # plus the schema in response_format (the client adds it)
    "tools": instructor.Mode.TOOLS,
    "json": instructor.Mode.JSON,
    "md_json": instructor.Mode.MD_JSON,
}
ENFORCED: dict[Mode, str] = {
    "json_schema": "the server enforces the schema",
    "json_object_schema": "the server enforces the schema with a grammar",
    "tools": "the server forces the tool call's shape",
    "json": "the server forces JSON, not the schema",
    "md_json": "nothing is enforced: the answer is parsed from the text",
}
REFUSAL_STATUSES = {400, 422, 500, 501}
_GENERIC = (
    r"not supported|unsupported|does not support|unrecognized|unknown (parameter|field|argument)"
    r"|extra (inputs|fields)|input should be"
)
_NAMED: dict[Mode, str] = {
    "json_schema": r"response_format|json_schema|json_object|input should be",
    "json_object_schema": r"response_format|json_object|schema|grammar|input should be",
    "tools": r"\btools?\b|tool_choice|function",
    "json": r"response_format|json_object|input should be",
    "md_json": r"$^",  # plain messages: nothing to refuse
}


class ModeRefused(Exception):
    """The endpoint does not take this structured-output mode; `detail` is its own words."""

    def __init__(self, mode: Mode, status: int, detail: str):
        super().__init__(f"HTTP {status}: {detail}")
        self.mode, self.status, self.detail = mode, status, detail


def refusal_names_the_mode(mode: Mode, status: int, message: str) -> bool:
    """Whether an error answer says the server does not take what this mode sends."""
    if status not in REFUSAL_STATUSES:
        return False
    text = message.lower()
    # a 500 is an outage unless it also says what it does not take (llama.cpp's "Input should be ...")
    return bool(re.search(_NAMED[mode], text) and (status != 500 or re.search(_GENERIC, text)))


class Modes:
    """What each endpoint was found to refuse, and the mode it settled on, for this process."""

    _lock = threading.Lock()
    _refused: ClassVar[dict[str, set[Mode]]] = {}
    _settled: ClassVar[dict[str, Mode]] = {}

    @classmethod
    def candidates(cls, endpoint: str, configured: Mode) -> list[Mode]:
        """The modes to try, in order: the configured one alone, or auto's order minus refusals."""
        if configured != "auto":
            return [configured]
        with cls._lock:
            refused = cls._refused.get(endpoint, set())
            settled = [cls._settled[endpoint]] if endpoint in cls._settled else []
            return settled + [m for m in AUTO_ORDER if m not in refused and m not in settled]

    @classmethod
    def refused(cls, endpoint: str, mode: Mode) -> None:
        with cls._lock:
            cls._refused.setdefault(endpoint, set()).add(mode)
            if cls._settled.get(endpoint) == mode:
                del cls._settled[endpoint]

    @classmethod
    def settle(cls, endpoint: str, mode: Mode) -> bool:
        """Remember the mode that worked; True the first time (worth one line on the terminal)."""
        with cls._lock:
            first = cls._settled.get(endpoint) != mode
            cls._settled[endpoint] = mode
            return first

    @classmethod
    def forget(cls) -> None:
        with cls._lock:
            cls._refused.clear()
            cls._settled.clear()
