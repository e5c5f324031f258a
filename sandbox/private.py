"""The person's private folder: what only the person's own commands read or write, never code in a
kernel (the key that signs approved facts lives there).

A local kernel runs as the same user, so its guard hides this folder in the kernel's own mount
namespace before the kernel starts (`kernel_guard.py`); a container never sees it. The folder is
`INVESTIGATOR_PRIVATE_DIR`, else `$XDG_CONFIG_HOME/investigator`, else `~/.config/investigator`:
the CLI and the sandbox server (which is given these variables) name the same one.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["HIDE", "PRIVATE_ENV", "links_on_the_way", "private_dir"]

PRIVATE_ENV = "INVESTIGATOR_PRIVATE_DIR"
HIDE = "INVESTIGATOR_HIDE"  # the kernel guard's list of folders to hide (os.pathsep between)


def private_dir(env: Mapping[str, str] | None = None) -> Path:
    """The private folder this environment names (it may not exist yet)."""
    env = os.environ if env is None else env
    if env.get(PRIVATE_ENV):
        return Path(env[PRIVATE_ENV]).absolute()
    config = env.get("XDG_CONFIG_HOME") or str(Path(env.get("HOME") or Path.home()) / ".config")
    return Path(config).absolute() / "investigator"


def links_on_the_way(folder: Path) -> list[str]:
    """The parts of `folder`'s path that are symbolic links. Kernel code can replace a link with a
    folder of its own (a mount point cannot be), so a private folder reached through one is not
    trusted."""
    found, path = [], Path(folder.anchor)
    for part in folder.parts[1:]:
        path = path / part
        if path.is_symlink():
            found.append(str(path))
    return found
