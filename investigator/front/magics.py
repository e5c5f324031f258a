"""IPython magics: `%load_ext investigator`, then

    %investigate --metric revenue --window 7d          (the CLI's flags, parsed by the CLI itself)
    %investigate --data df --metric revenue            (--data may name a DataFrame in the namespace)
    %investigate resume RUN_ID
    %%investigate --metric revenue --window 7d
    Why did revenue drop last week?                    (the cell body is the objective)

Each returns the `Investigation`, which Jupyter shows as the HTML report.
"""

from __future__ import annotations

import shlex
import sys
from typing import Any

from IPython.core.magic import Magics, line_cell_magic, magics_class

from investigator.errors import InvestigatorError
from investigator.front.notebook import Investigation, investigate


class UsageError(Exception):
    """A magic's line that does not parse; the message says what is wrong."""


@magics_class
class InvestigatorMagics(Magics):
    @line_cell_magic
    def investigate(self, line: str, cell: str | None = None) -> Investigation | None:
        """Explain why a metric moved; `%investigate --help` lists the flags."""
        try:
            command, params = parse(line)
            if command == "help":
                return None
            if command is not None:
                return Investigation.load(command, params.get("runs_dir")).resume()
            if cell is not None and cell.strip():
                params["objective"] = cell.strip()
            data = self._data(params.pop("data"))
            return investigate(data, **params)
        except (UsageError, InvestigatorError) as e:
            print(f"error: {e}", file=sys.stderr)
            return None

    def _data(self, value: Any) -> Any:
        """`--data df` names a DataFrame in the user's namespace; anything else is a path."""
        if value is None:
            return None
        found = self.shell.user_ns.get(str(value)) if self.shell is not None else None
        if found is not None and type(found).__name__ == "DataFrame":
            return found
        return str(value)


def parse(line: str) -> tuple[str | None, dict[str, Any]]:
    """Parse a magic's line with the CLI's own option definitions.

    Returns (None, keyword arguments for `investigate`), ("help", {}) after printing the help, or
    (run_id, {"runs_dir": ...}) for `resume RUN_ID`.
    """
    import typer
    from typer.main import get_command

    from investigator.front.cli import app

    cli = get_command(app)
    try:
        args = shlex.split(line)
        ctx = cli.make_context("%investigate", args)
    except typer.Exit:
        return "help", {}
    except (typer.TyperException, ValueError) as e:
        message = e.format_message() if hasattr(e, "format_message") else str(e)
        raise UsageError(f"{message}; see %investigate --help") from None
    params = {k: v for k, v in ctx.params.items() if k not in ("version", "verbose")}  # --version exits above
    if ctx.params.get("verbose"):
        import logging

        from investigator.terminal import library_logs

        library_logs(logging.INFO)
    rest = [*getattr(ctx, "_protected_args", []), *ctx.args]
    if rest:
        if rest[0] == "resume" and len(rest) == 2:
            return rest[1], {"runs_dir": params["runs_dir"]}
        raise UsageError(f"unexpected {' '.join(rest)!r}: use flags, e.g. --metric revenue, or resume RUN_ID")
    return None, params


def load(ipython: Any) -> None:
    ipython.register_magics(InvestigatorMagics)
