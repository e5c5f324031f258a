"""Where the warm helper listens, which helper serves this installation, and whether to use one.

Stdlib only: the thin client imports this before anything else.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["IDLE_S", "SANDBOX_ENV", "folder", "helper_key", "idle_seconds", "socket_path", "wanted"]

IDLE_S = 900.0  # a helper with nothing to do for 15 minutes exits
PACKAGES = ("investigator", "sandbox")
# what a stdio sandbox server is started with (kernels.mcp.server_env): a helper whose reserved
# server was started with other values is another helper
SANDBOX_ENV = (
    "HOME",
    "LOGNAME",
    "PATH",
    "SHELL",
    "TERM",
    "USER",
    "PYTHONPATH",
    "DOCKER_HOST",
    "DOCKER_CERT_PATH",
    "DOCKER_TLS_VERIFY",
    "INVESTIGATOR_SANDBOX_IMAGE",
    "INVESTIGATOR_PRIVATE_DIR",
    "XDG_CONFIG_HOME",
)
_ON = {"1", "true", "yes", "on"}
_OFF = {"0", "false", "no", "off"}


def wanted(env: Mapping[str, str], interactive: bool) -> bool:
    """Use a helper? `INVESTIGATOR_WARM=1` or `0` decides; by default only for a person at a
    terminal, outside CI, so a nightly job or a test suite never leaves a process behind."""
    asked = env.get("INVESTIGATOR_WARM", "").strip().lower()
    if asked in _ON:
        return True
    if asked in _OFF:
        return False
    return interactive and not env.get("CI")


def idle_seconds(env: Mapping[str, str]) -> float:
    try:
        return max(1.0, float(env.get("INVESTIGATOR_WARM_IDLE", IDLE_S)))
    except ValueError:
        return IDLE_S


def folder(env: Mapping[str, str]) -> Path | None:
    """This user's folder for helper sockets (mode 0700), or None when it cannot be made safe: a
    socket in a folder another user can write could be a stranger's."""
    base = env.get("INVESTIGATOR_WARM_DIR")
    if base:
        path = Path(base)
    elif env.get("XDG_RUNTIME_DIR") and Path(env["XDG_RUNTIME_DIR"]).is_dir():
        path = Path(env["XDG_RUNTIME_DIR"]) / "investigator-warm"
    else:
        path = Path("/tmp") / f"investigator-warm-{os.getuid()}"
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.lstat()
    except OSError:
        return None
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        return None
    return path


def helper_key(env: Mapping[str, str]) -> str:
    """Names the helper that may serve this client: same interpreter, same code (every source
    file's size and modification time: an edit or an upgrade starts a new helper), same installed
    distributions (each one's name, version and install time: a dependency upgraded with pip
    starts a new helper too), same environment for the sandbox server it keeps in reserve."""
    digest = hashlib.sha256()
    digest.update(f"{sys.executable}\0{sys.version}\0".encode())
    here = Path(__file__).resolve().parents[2]
    for package in PACKAGES:
        for root, dirs, files in os.walk(here / package):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                if name.endswith((".py", ".yaml", ".j2")):
                    info = os.stat(os.path.join(root, name))
                    digest.update(f"{root}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    for entry in _distributions() + _metadata():
        digest.update(entry.encode())
    for name in SANDBOX_ENV:
        digest.update(f"{name}={env.get(name, '')}\0".encode())
    return digest.hexdigest()[:20]


def _distributions() -> list[str]:
    """Every installed distribution on the import path: its metadata folder (`pandas-2.2.3.dist-info`)
    and when it was written. A few milliseconds: one listing per site-packages folder."""
    found = []
    for place in dict.fromkeys(p for p in sys.path if p):
        try:
            with os.scandir(place) as entries:
                for e in entries:
                    if e.name.endswith((".dist-info", ".egg-info")):
                        found.append(f"{place}/{e.name}\0{e.stat().st_mtime_ns}\0")
        except OSError:  # a zip, a missing folder
            continue
    return sorted(found)


def _metadata() -> list[str]:
    """Every distribution `importlib.metadata` finds (also an egg on the path, or one a finder
    adds, which the listing above misses), with its metadata file's modification time: rewritten
    by every install, upgrade or reinstall in place. Only stats, no parsing: a few milliseconds."""
    import importlib.metadata

    found = []
    for dist in importlib.metadata.distributions():
        where = getattr(dist, "_path", None)
        if where is None:
            continue
        for name in ("METADATA", "PKG-INFO"):
            try:
                found.append(f"{where}/{name}\0{os.stat(os.path.join(where, name)).st_mtime_ns}\0")
                break
            except OSError:
                continue
    return sorted(found)


def socket_path(where: Path, key: str) -> Path:
    return where / f"{key}.sock"
