"""Typed doors to nbformat, which has no annotations: the trail builds its notebook only through
these, so the `Any` its functions return stays in this module."""

from __future__ import annotations

from typing import Literal

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

__all__ = [
    "NotebookNode",
    "code_cell",
    "display",
    "error",
    "markdown_cell",
    "new",
    "result",
    "stream",
    "text",
]


def new(metadata: dict[str, object]) -> NotebookNode:
    """An empty v4 notebook."""
    nb: NotebookNode = new_notebook(metadata=metadata)  # type: ignore[no-untyped-call]
    return nb


def markdown_cell(source: str) -> NotebookNode:
    cell: NotebookNode = new_markdown_cell(source)  # type: ignore[no-untyped-call]
    return cell


def code_cell(
    source: str, execution_count: int | None = None, outputs: list[NotebookNode] | None = None
) -> NotebookNode:
    """A code cell; without `outputs` it is a cell nothing ran."""
    cell: NotebookNode = new_code_cell(source, execution_count=execution_count, outputs=outputs or [])  # type: ignore[no-untyped-call]
    return cell


def stream(name: Literal["stdout", "stderr"], text: str) -> NotebookNode:
    out: NotebookNode = new_output("stream", name=name, text=text)  # type: ignore[no-untyped-call]
    return out


def display(data: dict[str, str]) -> NotebookNode:
    """A display_data output, one entry per MIME type."""
    out: NotebookNode = new_output("display_data", data=data)  # type: ignore[no-untyped-call]
    return out


def result(data: dict[str, str], execution_count: int) -> NotebookNode:
    """An execute_result output (the cell's last value)."""
    out: NotebookNode = new_output("execute_result", data=data, execution_count=execution_count)  # type: ignore[no-untyped-call]
    return out


def error(ename: str, evalue: str, traceback: list[str]) -> NotebookNode:
    out: NotebookNode = new_output("error", ename=ename, evalue=evalue, traceback=traceback)  # type: ignore[no-untyped-call]
    return out


def text(nb: NotebookNode) -> str:
    """The notebook as .ipynb text, validated first (an invalid notebook raises, never gets written)."""
    nbformat.validate(nb)
    out: str = nbformat.writes(nb)  # type: ignore[no-untyped-call]
    return out
