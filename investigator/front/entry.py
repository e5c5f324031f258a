"""The `investigate` command: an investigation is handed to the warm helper when one answers
(`investigator.warm`), else it runs in this process, as everything else (help, triage, facts) does.
Imports nothing heavy before that choice."""

from __future__ import annotations

import contextlib
import os
import sys
import time

__all__ = ["main", "routed", "run_cli"]

HELPER_MAIN = "investigator.front.helper"  # the warm helper's process: `python -m` this
_LOCAL_FLAGS = {"--help", "-h", "--version", "--install-completion", "--show-completion"}


def routed(argv: list[str]) -> bool:
    """An investigation (the main command or `resume`), not help or another sub-command. The MCP
    server never goes to the helper, even after the main command's options
    (`investigate --runs-dir r mcp`): it serves its own client for as long as that client stays."""
    if any(arg in _LOCAL_FLAGS for arg in argv) or "mcp" in argv:
        return False
    return not argv or argv[0].startswith("-") or argv[0] == "resume"


def main() -> None:
    began, argv = time.monotonic(), sys.argv[1:]
    if routed(argv):
        from investigator.warm.place import wanted

        if wanted(os.environ, sys.stdin.isatty() and sys.stderr.isatty()):
            from investigator.warm.client import run_warm

            code = run_warm(argv, started=time.time() - (time.monotonic() - began), main=HELPER_MAIN)
            if code is not None:
                sys.exit(code)
    _exit(run_cli(began))


def run_cli(started: float) -> int:
    """The command line in this process, begun at `started` (a `time.monotonic()`); its exit code.
    The one way into it: `investigate` without a helper, and the warm helper's child with the
    client's clock. Both end their process at once after it (`_exit`, `os._exit`)."""
    from investigator.front import cli

    try:
        cli.main(started, exits=True)
    except SystemExit as done:
        if isinstance(done.code, int):
            return done.code
        if done.code is not None:
            print(done.code, file=sys.stderr)
            return 1
    return 0


def _exit(code: int) -> None:
    """Exit without the interpreter's teardown: freeing every module of pandas, Ibis and matplotlib
    one by one takes most of a second, after the answer is out. Everything a run keeps is already
    written and closed; what is registered to run at exit still runs."""
    import atexit

    pool = sys.modules.get("investigator.kernels.pool")
    if pool is not None:
        pool.POOL.close()  # registered with threading, whose shutdown an immediate exit skips
    atexit._run_exitfuncs()
    warm = sys.modules.get("investigator.warm.client")
    if warm is not None:
        warm.start_pending()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can reach it
            stream.flush()
    os._exit(code)
