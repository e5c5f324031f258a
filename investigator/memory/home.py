"""The project's memory folder (`.investigator/`): made when missing, set aside when damaged.

Memory is a bonus to a run, never a reason for one to fail: a path that is not a folder is moved
aside and the folder made again, with a warning the caller passes on.
"""

from __future__ import annotations

import time
from pathlib import Path

FACTS = "facts"
PENDING = "pending"
REJECTED = "rejected"
DB = "memory.db"


def aside(path: Path) -> Path:
    """Move a damaged file or folder out of the way, keeping it for a person to look at."""
    target = path.with_name(f"{path.name}.corrupt-{time.strftime('%Y%m%d-%H%M%S')}")
    n = 0
    while target.exists():
        n += 1
        target = target.with_name(f"{target.name}.{n}")
    path.rename(target)
    return target


def ensure_home(home: Path) -> tuple[Path, list[str]]:
    """The memory folder with its facts areas, and warnings about anything set aside."""
    warnings: list[str] = []
    for folder in (home, home / FACTS, home / FACTS / PENDING, home / FACTS / REJECTED):
        if folder.exists() and not folder.is_dir():
            moved = aside(folder)
            warnings.append(f"memory: {folder} was not a folder; moved to {moved.name} and made again")
        folder.mkdir(parents=True, exist_ok=True)
    return home, warnings
