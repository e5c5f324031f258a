"""How kernel code hands results back: a human-readable print plus a structured display message.

The structured part travels as a Jupyter display message with its own MIME type, so nothing that
the code prints (including text that comes from the data) can forge a result. Code run in this
very process (tests, benchmarks, the trail's replay) collects results with `collecting()`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel

MIME = "application/vnd.investigator+json"  # the one name of the structured-result channel

_collector: ContextVar[list[dict[str, Any]] | None] = ContextVar("investigator_emit_collector", default=None)


@contextmanager
def collecting() -> Iterator[list[dict[str, Any]]]:
    """Within this block, `emit` appends `{label, result}` to the yielded list instead of
    publishing a display message (scoped to the current thread or task)."""
    found: list[dict[str, Any]] = []
    token = _collector.set(found)
    try:
        yield found
    finally:
        _collector.reset(token)


def _is_frame(result: Any) -> bool:
    return type(result).__name__ == "DataFrame" and hasattr(result, "to_json")


def to_payload(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if _is_frame(result):
        return json.loads(result.to_json(orient="records", date_format="iso"))
    return json.loads(json.dumps(result, default=str))


def emit(result: Any, label: str | None = None) -> None:
    """Print `result` for people and publish it as structured data for the loop."""
    payload = to_payload(result)
    if _is_frame(result):
        print(result.to_string(max_rows=40))
    else:
        print(json.dumps(payload, indent=1, default=str))
    collector = _collector.get()
    if collector is not None:
        collector.append({"label": label, "result": payload})
        return
    try:
        from IPython.display import display

        display({MIME: {"label": label, "result": payload}}, raw=True)  # type: ignore[no-untyped-call]
    except ImportError:  # pragma: no cover - plain Python: the print is all there is
        pass
