"""Keep secrets in this process out of reach of code that runs as the same user.

A non-dumpable process's `/proc/<pid>/environ`, `mem` and `maps` belong to root, and no process of
the same user may ptrace it: so kernel code cannot read the API key or a database password from the
environment of the CLI, a notebook's host process, or the sandbox server. Root could still read
them, and anyone could read command lines: the local kernel's own namespaces and `drop_privileges`
(see `kernels/local.py` and `kernel_guard.py`) are what protect a run from those.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from pathlib import Path

__all__ = ["drop_privileges", "hide_folder", "no_dumps"]

PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
_CAPABILITY_V3 = 0x20080522
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC = 1, 2, 4, 8, 4096, 16384


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint32) for name in ("effective", "permitted", "inheritable")]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def no_dumps() -> bool:
    """Mark this process non-dumpable (Linux); False where the call is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return int(_libc().prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def drop_privileges() -> None:
    """Give up every capability for good, this process's and its children's: the bounding,
    ambient, inheritable, permitted and effective sets emptied and no new privileges on exec
    (a set-user-ID program gains none). Without capabilities, even a kernel whose user is root
    cannot unmount its private /proc to see the host's, mount another, or read other processes'
    memory and environments. Raises `OSError` when a set is not empty afterwards."""
    libc = _libc()
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EINVAL for one this kernel lacks: none to drop
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    if libc.capset(ctypes.byref(_CapHeader(_CAPABILITY_V3, 0)), (_CapData * 2)()) != 0:
        raise OSError(ctypes.get_errno(), "capset failed")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs could not be set")
    status = dict(
        line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line
    )
    held = [k for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb") if int(status.get(k, "0"), 16)]
    if held or status.get("NoNewPrivs", "").strip() != "1":
        raise OSError(f"capabilities still held after dropping them: {', '.join(held) or 'NoNewPrivs unset'}")


def hide_folder(folder: Path) -> bool:
    """In this process's own mount namespace (the kernel's, before it drops its privileges), put
    an empty read-only folder over `folder`, and make each folder on its path a mount point of
    itself: a mount point cannot be renamed or removed, so kernel code can neither read what is
    in `folder` nor move it aside and put a folder of its own (with a key it knows) in its place.
    A folder that does not exist is made first (else kernel code could make it); one that this
    user cannot make cannot be made by kernel code either: False, nothing to hide. Raises
    `OSError` when a mount fails."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        if folder.is_dir():
            raise
        return False
    real = folder.resolve()
    libc = _libc()

    def mount(source: str, target: Path, fstype: str | None, flags: int, data: str | None = None) -> None:
        ok = libc.mount(source.encode(), str(target).encode(), fstype and fstype.encode(), flags,
                        data and data.encode())  # fmt: skip
        if ok != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"could not mount over {target}: {os.strerror(err)}")

    for above in reversed(real.parents[:-1]):  # from the top down, "/" aside
        mount(str(above), above, None, MS_BIND | MS_REC)
    mount("tmpfs", real, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=000")
    return True
