"""No secret of the host is reachable from kernel code, on either backend: not in the kernel's
environment, and not in any other process's `/proc/<pid>/environ` or command line (the CLI's, the
sandbox server's, the user's shell), which a kernel running as the same user could otherwise read,
even when the kernel runs as root and tries to get out of its own view of /proc."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from .conftest import ROOT

CANARIES = {
    "OPENAI_API_KEY": "sk-canary-proc-walk-4242",
    "DATABASE_URL": "postgresql://u:pw-canary-proc-7777@db/x",
    "GITHUB_PAT": "ghp_canary_proc_5555",
}
WALK = r"""
import glob, os
found = []
for p in glob.glob("/proc/*/environ"):
    try:
        found.append(open(p, "rb").read().decode(errors="replace"))
    except Exception:
        pass
found.append(repr(dict(os.environ)))
print(len(found), "environments read")
print("\n".join(found))
"""
# what code that knows the local kernel's defences tries: take its private /proc away (the host's
# is underneath) and walk it, mount a fresh /proc elsewhere and walk that, and the same from a user
# namespace of its own
ESCAPE = r"""
import ctypes, glob, subprocess, sys, tempfile
loot = open("loot.txt", "w")  # all it reads, in the workspace: an output this long is cut
def walk(where):
    for p in glob.glob(f"{where}/*/environ") + glob.glob(f"{where}/*/cmdline"):
        try:
            loot.write(open(p, "rb").read().decode(errors="replace") + "\n")
        except Exception:
            pass
libc = ctypes.CDLL(None, use_errno=True)
tried = {"umount -l": subprocess.run(["umount", "-l", "/proc"], capture_output=True).returncode == 0}
walk("/proc")
fresh = tempfile.mkdtemp()
tried["mount proc"] = libc.mount(b"proc", fresh.encode(), b"proc", 0, None) == 0
walk(fresh)
NESTED = '''
import ctypes, glob
libc = ctypes.CDLL(None, use_errno=True)
print("unshare", libc.unshare(0x10000000 | 0x00020000) == 0)  # CLONE_NEWUSER | CLONE_NEWNS
print("umount", libc.umount2(b"/proc", 2) == 0)  # MNT_DETACH
for p in glob.glob("/proc/*/environ") + glob.glob("/proc/*/cmdline"):
    try:
        print(open(p, "rb").read().decode(errors="replace"))
    except Exception:
        pass
'''
nested = subprocess.run([sys.executable, "-c", NESTED], capture_output=True, text=True)
loot.write(nested.stdout + nested.stderr)
loot.close()
print(tried, nested.stdout.splitlines()[:2])
"""
ARGV_CANARY = "postgresql://u:pw-canary-argv-9090@db/x"  # a URL given on the CLI's command line
HOST = """
import json, sys
from pathlib import Path
from investigator.kernels.mcp import McpKernel
with McpKernel(backend=sys.argv[1], workdir=Path(sys.argv[2]), memory="1g") as k:
    out = k.execute(sys.argv[3], timeout=60)
print(json.dumps({"ok": out.ok, "text": out.text()}))
"""


def walk_from_a_host_holding_secrets(backend: str, tmp_path: Path, code: str = WALK) -> dict[str, Any]:
    """Start a host process whose environment holds the canaries (as a user's shell exports them)
    and whose command line holds a database URL, let it open a sandbox session, and run `code`
    (a walk of /proc) inside the kernel."""
    env = {**os.environ, **CANARIES, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", HOST, backend, str(tmp_path / "ws"), code, ARGV_CANARY],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    walked: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return walked


def test_a_kernel_walking_proc_finds_no_canary(backend: str, tmp_path: Path) -> None:
    result = walk_from_a_host_holding_secrets(backend, tmp_path)
    assert result["ok"], result["text"][-2000:]
    assert "environments read" in result["text"]  # the walk really ran
    leaked = [name for name, value in CANARIES.items() if value in result["text"]]
    assert leaked == [], f"kernel code read {leaked} from the host"


def test_a_local_kernel_that_unmounts_its_proc_finds_no_secret(tmp_path: Path) -> None:
    # as root the kernel's `umount -l /proc` showed the host's /proc, and root's capabilities read
    # every process's environment; as a plain user the host's command lines showed (a database URL)
    result = walk_from_a_host_holding_secrets("local", tmp_path, ESCAPE)
    assert result["ok"], result["text"][-2000:]
    loot = (tmp_path / "ws" / "loot.txt").read_text()
    assert "sandbox.kernel_guard" in loot  # the walk really ran: it read its own command line
    secrets = {**CANARIES, "argv": ARGV_CANARY}
    leaked = [name for name, value in secrets.items() if value in result["text"] + loot]
    assert leaked == [], f"kernel code read {leaked} from the host"
