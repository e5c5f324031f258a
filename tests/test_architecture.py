"""The house rules a reviewer would otherwise check by hand, read from the source with `ast`:
no import circle among the package's modules (type-only and function-level imports count), every
import running down the layers (nothing below the front doors reaches up), and no module past the
size a newcomer reads in one sitting."""

from __future__ import annotations

import ast
from pathlib import Path

from .source_tree import tree

PACKAGE = Path(__file__).resolve().parents[1] / "investigator"
MAX_LINES = 450
LOOP_MAX_LINES = 200


def modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The package modules `name` imports anywhere in its body (`from pkg import mod` is `pkg.mod`)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(tree(path)):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rsplit(".", 1)[0] if "." in target else ""
            if target and target != name:
                out.add(target)
    return out


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports(name, path, known) for name, path in known.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(edges[child]))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_planted_circle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_among_the_package_modules() -> None:
    assert cycles(graph()) == []


# The layers, top to bottom: a module imports only from its own layer or the layers below it (the
# table in CONTRIBUTING.md and docs/how-it-works.md says what each holds). A module is in the layer
# of the longest prefix that names it; the package itself names only its `__init__`.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("front doors", ("investigator", "investigator.__main__", "investigator.front")),
    (
        "beside the doors",
        ("investigator.warm", "investigator.triage", "investigator.protocols", "investigator.testing"),
    ),
    (
        "wiring",
        (
            "investigator.runner",
            "investigator.investigations",
            "investigator.runs",
            "investigator.factories",
            "investigator.startup",
            "investigator.remembering",
            "investigator.preflight",
        ),
    ),
    ("output", ("investigator.report",)),
    ("deciders and execution", ("investigator.planners", "investigator.llm", "investigator.kernels")),
    ("the loop", ("investigator.run", "investigator.kinds")),
    ("memory", ("investigator.memory",)),
    ("the data", ("investigator.sources",)),
    ("the question", ("investigator.request", "investigator.semantic")),
    (
        "foundation",
        (
            "investigator.config",
            "investigator.errors",
            "investigator.fmt",
            "investigator.limits",
            "investigator.yamlfile",
            "investigator.files",
            "investigator.terminal",
            "investigator.version",
            # the query check and connection URLs import only errors and limits: the metric
            # definitions in config check a `sql:` with them
            "investigator.sources.readonly",
            "investigator.sources.urls",
        ),
    ),
    ("statistics", ("investigator.analysis",)),
]
# Arrows up that another branch removes: the lead deletes each line once that branch is merged.
EXEMPT: set[tuple[str, str]] = set()  # (lower, higher) package pairs allowed to point up: none


def exempt(arrow: tuple[str, str]) -> bool:
    return any(arrow[0].startswith(low + ".") and arrow[1].startswith(high + ".") for low, high in EXEMPT)


def layer_of(name: str) -> int:
    """The index in LAYERS of the longest prefix naming `name`."""
    best, where = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            within = name.startswith(prefix + ".") and prefix != "investigator"
            if (name == prefix or within) and len(prefix) > best:
                best, where = len(prefix), i
    return where


def upward(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """Every import that runs from a layer up to one above it."""
    return {
        (name, target)
        for name, targets in edges.items()
        for target in targets
        if layer_of(target) < layer_of(name)
    }


def test_the_layer_check_finds_a_planted_arrow_up() -> None:
    planted = {"investigator.memory.hooks": {"investigator.run.state", "investigator.config"}}
    assert upward(planted) == {("investigator.memory.hooks", "investigator.run.state")}
    assert layer_of("investigator.sources.readonly") == layer_of("investigator.config")
    assert layer_of("investigator.sources.resolve") < layer_of("investigator.request")
    assert layer_of("investigator.newcomer") == -1  # a new module is given its layer on purpose


def test_every_module_has_a_layer() -> None:
    assert {name for name in modules() if layer_of(name) < 0} == set()


def test_every_import_runs_down_the_layers() -> None:
    assert {arrow for arrow in upward(graph()) if not exempt(arrow)} == set()


def test_no_module_is_longer_than_a_sitting() -> None:
    long = {n: len(p.read_text().splitlines()) for n, p in modules().items()}
    assert {n: k for n, k in long.items() if k > MAX_LINES} == {}
    assert long["investigator.run.loop"] <= LOOP_MAX_LINES


KINDS_PACKAGE = "investigator.kinds"
ROOT_CAUSES_MAX_LINES = 40


PLANTED = ast.parse("from investigator.kinds.segment import _decide\nfrom investigator.kinds import KINDS\n")


def private_imports(module: ast.Module) -> set[str]:
    """`from investigator.x import _name` in a module: a private name crossing modules."""
    return {
        f"{node.module}.{a.name}"
        for node in ast.walk(module)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("investigator")
        for a in node.names
        if a.name.startswith("_") and not a.name.startswith("__")
    }


def test_the_private_import_finder_finds_a_planted_one() -> None:
    assert private_imports(PLANTED) == {"investigator.kinds.segment._decide"}


def test_no_private_name_crosses_a_module_of_the_kinds_package() -> None:
    crossing = {
        name: found
        for name, path in modules().items()
        if name.startswith(KINDS_PACKAGE)
        if (found := private_imports(tree(path)))
    }
    assert crossing == {}


def test_no_module_outside_the_kinds_reaches_into_a_kind_for_a_private_name() -> None:
    crossing = {
        name: {f for f in found if f.startswith(KINDS_PACKAGE)}
        for name, path in modules().items()
        if (found := private_imports(tree(path)))
    }
    assert {n: f for n, f in crossing.items() if f} == {}


def test_deciding_the_causes_is_one_short_loop_over_the_kinds() -> None:
    path = modules()[KINDS_PACKAGE]
    fn = next(n for n in ast.walk(tree(path)) if isinstance(n, ast.FunctionDef) and n.name == "root_causes")
    assert fn.end_lineno is not None and fn.end_lineno - fn.lineno + 1 <= ROOT_CAUSES_MAX_LINES
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For)]
    assert len(loops) == 1 and ast.unparse(loops[0].iter) == "KINDS"


def test_every_kind_is_listed_once_and_every_kind_module_is_listed() -> None:
    from investigator.kinds import KINDS

    names = [k.name for k in KINDS]
    assert len(names) == len(set(names))
    helpers = {"base", "common", "verify"}
    kind_modules = {
        n.rsplit(".", 1)[1] for n in modules() if n.startswith(KINDS_PACKAGE + ".") and n.count(".") == 2
    } - helpers
    assert kind_modules == set(names)
