"""Issue 39, item 4 (the part the front doors' owner breaks): `warm/` and `front/` imported each
other (the helper's child ran `front.entry.run_cli`, its preload imported `front.cli`). The speed
layer now imports nothing of the front doors, type-only and function-level imports included: the
front door starts the helper (`front/helper.py`) and hands it the command line."""

from __future__ import annotations

import ast
from pathlib import Path

WARM = Path(__file__).parents[2] / "investigator" / "warm"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_warm_helper_imports_nothing_of_the_front_doors() -> None:
    modules = sorted(WARM.glob("*.py"))
    assert len(modules) >= 7
    reaching = {
        p.name: sorted(n for n in _imported(p) if n.startswith("investigator.front")) for p in modules
    }
    assert not {name: found for name, found in reaching.items() if found}
