"""The project's own source, parsed once when the tests are collected.

CPython 3.11 keeps `ast`'s recursion counter per interpreter, not per thread: an `ast.parse`
racing another thread's (an in-process kernel compiling a cell, left running by an earlier test)
fails with "AST constructor recursion depth mismatch". Collection runs before any test starts a
thread, so the tests that read the source as trees read these.
"""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
TREES: dict[Path, ast.Module] = {
    path: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for folder in ("investigator", "sandbox")
    for path in sorted((PROJECT / folder).rglob("*.py"))
}


def tree(path: Path) -> ast.Module:
    """The parsed module at `path` (a file of the package or the sandbox)."""
    return TREES[path.resolve()]
