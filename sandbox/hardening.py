"""Keep secrets in this process out of reach of code that runs as the same user.

A non-dumpable process's `/proc/<pid>/environ`, `mem` and `maps` belong to root, and no process of
the same user may ptrace it: so kernel code cannot read the API key or a database password from the
environment of the CLI, a notebook's host process, or the sandbox server. (Root can still read them:
the kernel's own process namespace, see `kernels/local.py`, is what protects a run started as root.)
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

PR_SET_DUMPABLE = 4


def no_dumps() -> bool:
    """Mark this process non-dumpable (Linux); False where the call is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False
