"""No secret of the host is reachable from kernel code, on either backend: not in the kernel's
environment, and not in any other process's `/proc/<pid>/environ` (the CLI's, the sandbox
server's, the user's shell), which a kernel running as the same user could otherwise read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
HOST = """
import json, sys
from pathlib import Path
from investigator.kernels.mcp import McpKernel
with McpKernel(backend=sys.argv[1], workdir=Path(sys.argv[2]), memory="1g") as k:
    out = k.execute(sys.argv[3], timeout=60)
print(json.dumps({"ok": out.ok, "text": out.text()}))
"""


def walk_from_a_host_holding_secrets(backend: str, tmp_path: Path) -> dict:
    """Start a host process whose environment holds the canaries (as a user's shell exports them),
    let it open a sandbox session, and walk /proc from inside the kernel."""
    env = {**os.environ, **CANARIES, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", HOST, backend, str(tmp_path / "ws"), WALK],
        capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_kernel_walking_proc_finds_no_canary(backend: str, tmp_path: Path) -> None:
    result = walk_from_a_host_holding_secrets(backend, tmp_path)
    assert result["ok"], result["text"][-2000:]
    assert "environments read" in result["text"]  # the walk really ran
    leaked = [name for name, value in CANARIES.items() if value in result["text"]]
    assert leaked == [], f"kernel code read {leaked} from the host"
