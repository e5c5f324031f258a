"""How kernel code hands results back: a human-readable print plus a structured display message.

The structured part travels as a Jupyter display message with its own MIME type, so nothing that
the code prints (including text that comes from the data) can forge a result.
"""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from pydantic import BaseModel

MIME = "application/vnd.investigator+json"

# An in-process executor (tests, benchmarks) collects payloads here instead of display messages.
sink: list[dict[str, Any]] | None = None


def to_payload(result: Any) -> Any:
    if isinstance(result, BaseModel):
        return result.model_dump(mode="json")
    if isinstance(result, pd.DataFrame):
        return json.loads(result.to_json(orient="records", date_format="iso"))
    return json.loads(json.dumps(result, default=str))


def emit(result: Any, label: str | None = None) -> None:
    """Print `result` for people and publish it as structured data for the loop."""
    payload = to_payload(result)
    if isinstance(result, pd.DataFrame):
        print(result.to_string(max_rows=40))
    else:
        print(json.dumps(payload, indent=1, default=str))
    if sink is not None:
        sink.append({"label": label, "result": payload})
        return
    try:
        from IPython.display import display

        display({MIME: {"label": label, "result": payload}}, raw=True)
    except ImportError:  # pragma: no cover - plain Python: the print is all there is
        pass
