"""Reading the YAML people give us (`triage.yaml`, `configs/*.yaml`) without letting it cost more
than it looks: a few hundred bytes of nested aliases (`&a [*b, *b, ...]`) expand to billions of
values once validated or quoted. Aliases are fine in moderation (shared settings, `<<: *defaults`);
a document whose aliases add more than `ALIAS_BUDGET` values, or refer to themselves, is refused
before anything is built from it.
"""

from __future__ import annotations

from typing import Any

import yaml

from investigator.errors import ConfigError
from investigator.fmt import clip

__all__ = ["ALIAS_BUDGET", "load_yaml"]

ALIAS_BUDGET = 10_000  # values aliases may add to a document: far above any real config


class _BudgetLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML has no types here
    def compose_document(self) -> yaml.Node | None:
        node: yaml.Node | None = super().compose_document()
        if node is not None:
            _check_expansion(node)
        return node


def _check_expansion(root: yaml.Node) -> None:
    """Count the values the document holds with its aliases expanded, each node's size computed
    once; more than the distinct nodes plus the budget (or a cycle) is refused."""
    sizes: dict[int, int] = {}
    open_: set[int] = set()

    def size(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in open_:
            raise ConfigError(
                f"line {node.start_mark.line + 1}: a YAML alias refers to the value that holds it; "
                "write the value out"
            )
        open_.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            total += sum(size(child) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            total += sum(size(k) + size(v) for k, v in node.value)
        open_.discard(key)
        sizes[key] = total
        return total

    expanded = size(root)
    if expanded - len(sizes) > ALIAS_BUDGET:
        raise ConfigError(
            f"YAML aliases expand to {expanded:,} values from {len(sizes):,} written (more than "
            f"{ALIAS_BUDGET:,} added by aliases): write the values out, or use fewer aliases"
        )


# dates stay text, for the config's own model to read: `end: 2026-02-30` is then a message naming
# the key, where YAML's own reading of it raised a bare ValueError (a traceback)
_BudgetLoader.yaml_implicit_resolvers = {
    first: [r for r in resolvers if r[0] != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """`yaml.safe_load`, with aliases held to `ALIAS_BUDGET` (a `ConfigError` past it) and dates
    left as text. Recursion too deep for the parser, or a value YAML cannot build (an explicit
    `!!timestamp` that is no date), is refused the same way."""
    try:
        return yaml.load(text, Loader=_BudgetLoader)  # a SafeLoader, budgeted
    except RecursionError:
        raise ConfigError("YAML nested too deeply to read: flatten it") from None
    except (ValueError, TypeError, OverflowError) as e:
        raise ConfigError(f"a YAML value cannot be read ({clip(e, 160)})") from None
