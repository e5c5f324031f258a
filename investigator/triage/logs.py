"""The job's log lines on stderr: plain text for people, or one JSON object per line for the log
collectors schedulers feed (`--log-format json`). Every line passes the secret redactor."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any, Literal

from investigator.triage.secrets import Redactor

LogFormat = Literal["text", "json"]


class _Formatter(logging.Formatter):
    def __init__(self, kind: LogFormat, redact: Redactor) -> None:
        super().__init__()
        self.kind, self.redact = kind, redact

    def format(self, record: logging.LogRecord) -> str:
        fields: dict[str, Any] = getattr(record, "fields", {}) or {}
        if self.kind == "json":
            line = {
                "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
                "level": record.levelname.lower(),
                "event": record.getMessage(),
                **fields,
            }
            return self.redact(json.dumps(line, default=str))
        extra = " ".join(f"{k}={v}" for k, v in fields.items() if v is not None)
        return self.redact(f"triage: {record.getMessage()}" + (f" ({extra})" if extra else ""))


def configure(kind: LogFormat, redact: Redactor, stream: Any = None) -> logging.Handler:
    """Send the triage logger to stderr (or `stream`) in `kind`; returns the handler to remove."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_Formatter(kind, redact))
    logger = logging.getLogger("investigator.triage")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    return handler


def unconfigure(handler: logging.Handler) -> None:
    logging.getLogger("investigator.triage").removeHandler(handler)
