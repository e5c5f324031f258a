"""Telling the person at the terminal why the run is waiting, and for how long.

An `OnWait` is called as `on_wait(seconds, reason)` before each backoff wait. It may return at once
(the client then sleeps) or block to show a countdown (the client sleeps only what is left). The run's
state on disk is already current when it is called: stopping the run there loses nothing.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from rich.console import Console

from investigator.terminal import text

OnWait = Callable[[float, str], None]

__all__ = ["OnWait", "countdown", "terminal_countdown"]


def countdown(update: Callable[[str], None], tick: float = 1.0) -> OnWait:
    """An `OnWait` that blocks for the wait, calling `update` with the time left every `tick`s.

    The CLI can pass `countdown(status.update)` to show the countdown on its own status line.
    """

    def wait(seconds: float, reason: str) -> None:
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            update(f"{reason}: retrying in {_clock(left)} (Ctrl-C stops; the run is saved)")
            time.sleep(min(tick, left))

    return wait


def terminal_countdown(seconds: float, reason: str) -> None:
    """The default: a live countdown on stderr when it is a terminal, one line otherwise."""
    console = Console(stderr=True)
    if not sys.stderr.isatty():
        console.print(text(f"waiting {_clock(seconds)}: {reason}"), highlight=False)
        return
    with console.status("") as status:
        countdown(lambda line: status.update(text(line)))(seconds, reason)


def _clock(seconds: float) -> str:
    s = max(int(seconds + 0.999), 0)
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"
