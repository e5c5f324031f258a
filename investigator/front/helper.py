"""The warm helper's process (`python -m investigator.front.helper --folder DIR --key KEY`): the
helper (`investigator.warm.daemon`) serving this command line. It lives with the front doors so
the speed layer imports nothing of them: the front door hands it the command a run executes."""

from __future__ import annotations

import sys


def _imports() -> None:
    """The command line's own modules, imported once in the helper (`warm.warmup.preload` has the
    run's)."""
    import investigator.front.cli
    import investigator.front.entry  # noqa: F401


def main(argv: list[str] | None = None) -> None:
    from investigator.front.entry import run_cli
    from investigator.warm import daemon

    daemon.main(sys.argv[1:] if argv is None else argv, run_cli, _imports)


if __name__ == "__main__":
    main()
