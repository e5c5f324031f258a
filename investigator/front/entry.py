"""The `investigate` command: an investigation is handed to the warm helper when one answers
(`investigator.warm`), else it runs in this process, as everything else (help, triage, facts) does.
Imports nothing heavy before that choice."""

from __future__ import annotations

import os
import sys

__all__ = ["main", "routed"]

_LOCAL_FLAGS = {"--help", "-h", "--version", "--install-completion", "--show-completion"}


def routed(argv: list[str]) -> bool:
    """An investigation (the main command or `resume`), not help or another sub-command."""
    if any(arg in _LOCAL_FLAGS for arg in argv):
        return False
    return not argv or argv[0].startswith("-") or argv[0] == "resume"


def main() -> None:
    argv = sys.argv[1:]
    if routed(argv):
        from investigator.warm.place import wanted

        if wanted(os.environ, sys.stdin.isatty() and sys.stderr.isatty()):
            from investigator.warm.client import run_warm

            code = run_warm(argv)
            if code is not None:
                sys.exit(code)
    from investigator.front.cli import main as here

    here()
