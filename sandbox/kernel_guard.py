"""Start an IPython kernel without privileges, that exits when the sandbox server that started it
is gone.

The kernel runs behind `unshare` (see `kernels/local.py`) as root of its own user namespace: first
of all this hides the person's private folder (`sandbox/private.py`: the key that signs approved
facts) in the kernel's mount namespace, then drops every capability for good, so kernel code cannot
undo the namespaces' view (a `umount -l /proc` showed the host's processes, an unmount would show
the folder) whatever user started it; a guard that cannot do both does not start the kernel.

In its own PID namespace the kernel is process 1 with no parent it can see, so ipykernel's own
parent poller cannot notice a server killed with SIGKILL. The server holds a FIFO open (the path is
in `INVESTIGATOR_LIFELINE`); when the server dies its end closes, reading the FIFO returns EOF,
and this guard ends the kernel, removing the server's private folder for it (the FIFO's folder:
connection file and sockets) that the dead server can no longer remove.
"""

from __future__ import annotations

import os
import runpy
import shutil
import sys
import threading
from pathlib import Path

LIFELINE = "INVESTIGATOR_LIFELINE"
RUNTIME_PREFIX = "investigator-kernel-"


def _exit_when_the_server_is_gone(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
        while os.read(fd, 4096):
            pass
    except OSError:
        pass
    folder = os.path.dirname(path)
    if os.path.basename(folder).startswith(RUNTIME_PREFIX):  # the server's mkdtemp, nothing else
        shutil.rmtree(folder, ignore_errors=True)
    os._exit(1)


if __name__ == "__main__":
    from sandbox.hardening import drop_privileges, hide_folder
    from sandbox.private import HIDE

    try:
        for hidden in filter(None, os.environ.pop(HIDE, "").split(os.pathsep)):
            hide_folder(Path(hidden))
        os.chdir(os.getcwd())  # the working folder seen through the new mounts, not under them
        drop_privileges()  # before any thread starts: capabilities are per thread
    except OSError as exc:
        print(f"sandbox: no kernel: it could not hide the private folder or drop its privileges ({exc})",
              file=sys.stderr)  # fmt: skip
        sys.exit(1)
    path = os.environ.pop(LIFELINE, "")
    if path:
        threading.Thread(target=_exit_when_the_server_is_gone, args=(path,), daemon=True).start()
    sys.argv[0] = "ipykernel_launcher"
    runpy.run_module("ipykernel_launcher", run_name="__main__", alter_sys=True)
