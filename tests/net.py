"""Addresses for servers the tests start: only loopback, a port the kernel says is free."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def until(check: Callable[[], bool], timeout: float) -> bool:
    """Whether `check` came true within `timeout` seconds (polled every 0.2 s)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if check():
            return True
        time.sleep(0.2)
    return False


def answers(port: int) -> bool:
    """Whether a server listens on this loopback port."""
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False
