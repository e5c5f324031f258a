"""What keeps a saved run honest: one process at a time works on it, and it continues only on the
data it started with."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from investigator.errors import ConfigError, DataError

LOCK_FILE = ".lock"
HASH_LIMIT = 256 * 2**20  # files up to this size are hashed whole; larger ones by their first and last MiB


class Fingerprint(BaseModel):
    """The input as the run first saw it."""

    size: int
    mtime_ns: int
    sha256: str


def fingerprint(path: str | Path) -> Fingerprint | None:
    """The file's size, modification time and a content hash; None for what is not a local file."""
    p = Path(path)
    if not p.is_file():
        return None
    st = p.stat()
    h = hashlib.sha256()
    with open(p, "rb") as f:
        if st.st_size <= HASH_LIMIT:
            for block in iter(lambda: f.read(2**20), b""):
                h.update(block)
        else:
            h.update(f.read(2**20))
            f.seek(-(2**20), os.SEEK_END)
            h.update(f.read(2**20))
    return Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, sha256=h.hexdigest())


def check_unchanged(saved: Fingerprint | None, path: str | Path, run_id: str) -> None:
    """Refuse to continue a run whose input changed since it started (the movement and the causes
    would come from two different files)."""
    if saved is None:
        return
    now = fingerprint(path)
    if now is None:
        raise DataError(f"run {run_id} read {path}, which is gone: start a new run on the data you have")
    if now.sha256 != saved.sha256 or now.size != saved.size:
        raise DataError(
            f"{path} changed since run {run_id} started: start a new run, or resume with --force to "
            "run it again from the start on the new data"
        )


@contextlib.contextmanager
def run_lock(folder: Path, run_id: str) -> Iterator[None]:
    """Hold the run folder for this process; a second resume of the same run is refused at once."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ConfigError(
                f"run {run_id} is in progress in another process; wait for it, then resume it"
            ) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock
