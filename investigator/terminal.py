"""What rich shows on the terminal is text, never markup: a segment value `[/]US[bold red]`, a column
named `[bold]x` or an emoji code `:warning:` is printed as written, not parsed (which crashed a
finished run's summary). Every rich print, table cell, panel and status line goes through `text`.
"""

from __future__ import annotations

import logging
import os
import sys

from rich.text import Text

__all__ = ["cells", "library_logs", "text"]


def text(value: object, style: str = "") -> Text:
    """`value` as literal text, in `style`; a `Text` is kept as it is."""
    return value if isinstance(value, Text) else Text(str(value), style=style)


def cells(*values: object) -> list[Text]:
    """A table row, each cell literal text."""
    return [text(v) for v in values]


class _Stderr(logging.Handler):
    """Writes to whatever `sys.stderr` is when a record comes: the warm helper gives each run its
    client's terminal, and a stream bound earlier would be the warm-up's, closed since."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
        except Exception:
            self.handleError(record)


def library_logs(level: int | None = None) -> None:
    """Libraries' warnings and errors on stderr, one line each, nothing below (`level`, else
    `INVESTIGATOR_LOG_LEVEL`, lowers it: `--verbose` is INFO): the root logger gets
    its handler before any library configures it. (`wordllama`, the recall model, calls
    `logging.basicConfig(level=INFO)` at import: that printed a line per HTTP request to the model,
    and through the warm helper a `--- Logging error ---` traceback, its stream being the warm-up's;
    `memory.embed` now puts the root logger back after that import.)"""
    level = log_level() if level is None else level
    root = logging.getLogger()
    ours = next((h for h in root.handlers if isinstance(h, _Stderr)), None)
    if ours is None:
        root.addHandler(_Stderr(level))
    else:
        ours.setLevel(level)
    for name in CHATTY:  # their INFO lines (one per request) only when asked for
        logging.getLogger(name).setLevel(level)


CHATTY = ("httpx", "httpx2", "httpcore", "httpcore2", "openai", "instructor")  # openai uses httpx2


def log_level() -> int:
    """`INVESTIGATOR_LOG_LEVEL` (`DEBUG`, `INFO`, ...; default `WARNING`): what libraries may print."""
    name = os.environ.get("INVESTIGATOR_LOG_LEVEL", "WARNING").strip().upper()
    level = logging.getLevelName(name)
    return level if isinstance(level, int) else logging.WARNING
