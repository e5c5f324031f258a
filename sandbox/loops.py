"""Close the event loops that libraries leave behind in worker threads, before exit.

jupyter_client's synchronous API (through jupyter_core's `run_sync`) creates an event loop in each
worker thread that calls it and never closes it. When the thread ends, the loop becomes garbage in
a reference cycle; whenever the collector then reaches it, its socket may already be finalised and
`BaseEventLoop.__del__` prints "Invalid file descriptor: -1" to stderr, which the CLI shares with
the sandbox server. Closing every idle loop explicitly on the way out makes `__del__` a no-op.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc


def close_idle_loops() -> int:
    """Close every event loop in this process that is neither running nor closed; returns how many."""
    closed = 0
    for obj in gc.get_objects():
        if isinstance(obj, asyncio.BaseEventLoop) and not obj.is_running() and not obj.is_closed():
            with contextlib.suppress(Exception):
                obj.close()
                closed += 1
    return closed
