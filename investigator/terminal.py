"""What rich shows on the terminal is text, never markup: a segment value `[/]US[bold red]`, a column
named `[bold]x` or an emoji code `:warning:` is printed as written, not parsed (which crashed a
finished run's summary). Every rich print, table cell, panel and status line goes through `text`.
"""

from __future__ import annotations

from rich.text import Text

__all__ = ["cells", "text"]


def text(value: object, style: str = "") -> Text:
    """`value` as literal text, in `style`; a `Text` is kept as it is."""
    return value if isinstance(value, Text) else Text(str(value), style=style)


def cells(*values: object) -> list[Text]:
    """A table row, each cell literal text."""
    return [text(v) for v in values]
