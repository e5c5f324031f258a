"""Writing files so that a crash or a full disk leaves the previous version, never half a file."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path


def write_atomic(path: Path, text: str) -> Path:
    """Write `text` to a temporary file beside `path`, flush it to disk, then rename it over `path`
    (atomic on POSIX). On any failure the temporary file is removed and `path` is untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path
