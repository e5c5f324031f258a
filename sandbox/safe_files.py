"""Host-side file operations inside a folder the kernel can write, never through a link it planted.

A workspace is writable by the kernel (a bind mount for a container), so any name in it may be a
symbolic link the kernel made, pointing anywhere on the host. Every host-side read or write into a
workspace goes through here: folders are walked one component at a time from a directory file
descriptor with `O_NOFOLLOW`, files are created with `O_CREAT | O_EXCL | O_NOFOLLOW` (which refuses
an existing name, a dangling link included) and get their mode from the descriptor (`fchmod`), and
reads open only regular files. No path is looked up twice, so a link swapped in between a check and
a use is not followed either.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

__all__ = [
    "UnsafePath",
    "file_stats",
    "read_regular",
    "relative_name",
    "touch",
    "write_fresh",
    "write_replacing",
]

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
FRESH_TRIES = 10  # numbered names tried before a random one


class UnsafePath(PermissionError):
    """A name that goes through a link, or is one, inside a kernel-writable folder."""


def relative_name(name: str) -> str:
    """`name` as a normalised relative path; refuses absolute names and names that climb out."""
    text = os.path.normpath(name) if name else ""
    rel = PurePosixPath(text)
    if not text or text == "." or rel.is_absolute() or rel.parts[0] == "..":
        raise ValueError(f"{name!r} is not a file name inside the workspace")
    return rel.as_posix()


def _parts(rel: str) -> list[str]:
    parts = relative_name(rel).split("/")
    if any(p in ("", ".", "..") for p in parts):  # normpath leaves none; belt and braces
        raise ValueError(f"{rel!r} is not a file name inside the workspace")
    return parts


@contextlib.contextmanager
def _folder(root: Path, parts: list[str], create: bool = False) -> Iterator[int]:
    """A descriptor of `root/parts...`, each component opened without following a link.

    `root` itself is the host's choice and may be reached through links; what is under it is not.
    With `create`, missing folders are made (mode 0755).
    """
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts):
            if create:
                with contextlib.suppress(FileExistsError):  # mkdir never follows a link
                    os.mkdir(part, 0o755, dir_fd=fd)
            try:
                sub = os.open(part, _DIR, dir_fd=fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    where = "/".join(parts[: i + 1])
                    raise UnsafePath(f"{where} is a link or not a folder; links are not followed") from None
                raise
            os.close(fd)
            fd = sub
        yield fd
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes, mode: int) -> None:
    os.fchmod(fd, mode)  # the descriptor we made, never a path the kernel could have replaced
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _kind(dirfd: int, name: str) -> str:
    try:
        st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
    except FileNotFoundError:
        return "gone"
    if stat.S_ISLNK(st.st_mode):
        return "link"
    return "file" if stat.S_ISREG(st.st_mode) else "other"


def write_fresh(root: Path, rel: str, data: bytes, mode: int = 0o644) -> tuple[str, list[str]]:
    """Create a new file named `rel` (or, when that name is taken, a fresh one next to it).

    Returns the name written and the taken names that were links or not regular files (left
    untouched, for the caller to report). Refuses (`UnsafePath`) when a folder on the way is a link.
    """
    parts = _parts(rel)
    folder, leaf = parts[:-1], parts[-1]
    stem, dot, ext = leaf.rpartition(".") if "." in leaf.lstrip(".") else (leaf, "", "")
    candidates = [leaf] + [f"{stem}-{n}{dot}{ext}" for n in range(1, FRESH_TRIES)]
    odd: list[str] = []
    with _folder(root, folder, create=True) as dirfd:
        for attempt in range(FRESH_TRIES + 20):
            name = (
                candidates[attempt]
                if attempt < len(candidates)
                else f"{stem}-{secrets.token_hex(6)}{dot}{ext}"
            )
            try:
                fd = os.open(name, _NEW, mode, dir_fd=dirfd)
            except FileExistsError:
                kind = _kind(dirfd, name)
                if kind in ("link", "other"):
                    odd.append(
                        "/".join([*folder, name]) + f" ({'a link' if kind == 'link' else 'not a file'})"
                    )
                continue
            try:
                _write_all(fd, data, mode)
            finally:
                os.close(fd)
            return "/".join([*folder, name]), odd
    raise FileExistsError(f"no free name for {rel} in the workspace")


def write_replacing(root: Path, rel: str, data: bytes, mode: int = 0o644) -> str:
    """Write `rel`, replacing a regular file of that name; refuses a name that is a link.

    The content goes to a fresh temporary file that is renamed over the name: a rename replaces a
    link that appeared meanwhile instead of writing through it.
    """
    parts = _parts(rel)
    folder, leaf = parts[:-1], parts[-1]
    with _folder(root, folder, create=True) as dirfd:
        kind = _kind(dirfd, leaf)
        if kind == "link":
            raise UnsafePath(f"{rel} is a link; links are not followed or replaced")
        if kind == "other":
            raise IsADirectoryError(f"{rel} exists and is not a file")
        tmp = f".{leaf}.{secrets.token_hex(6)}.part"
        fd = os.open(tmp, _NEW, mode, dir_fd=dirfd)
        try:
            try:
                _write_all(fd, data, mode)
            finally:
                os.close(fd)
            os.rename(tmp, leaf, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dirfd)
            raise
    return "/".join(parts)


def touch(root: Path, rel: str, mode: int = 0o644) -> None:
    """Make sure the regular file `rel` exists (empty if new); refuses a link."""
    parts = _parts(rel)
    with _folder(root, parts[:-1], create=True) as dirfd:
        flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            fd = os.open(parts[-1], flags, mode, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(f"{rel} is a link; links are not followed") from None
            raise
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise UnsafePath(f"{rel} is not a regular file")
        finally:
            os.close(fd)


def read_regular(root: Path, rel: str, limit: int) -> bytes:
    """The content of the regular file `rel`; refuses links (the name or a folder on the way),
    anything that is not a regular file, and files longer than `limit` bytes."""
    parts = _parts(rel)
    with _folder(root, parts[:-1]) as dirfd:
        try:  # O_NONBLOCK: a FIFO planted under the name does not hang the server
            fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafePath(f"{rel} is a link; links are not followed") from None
            raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FileNotFoundError(f"{rel} is not a regular file")
        if st.st_size > limit:
            raise ValueError(f"file too large ({st.st_size:,} bytes; at most {limit:,})")
        chunks, size = [], 0
        while chunk := os.read(fd, min(1 << 20, limit + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                raise ValueError(f"file too large (over {limit:,} bytes)")
        return b"".join(chunks)
    finally:
        os.close(fd)


def file_stats(root: Path, skip_hidden: bool = True) -> dict[str, os.stat_result]:
    """Every regular file under `root` (relative name -> its own `lstat`), links neither listed
    nor followed; with `skip_hidden`, names under a dot-folder (or dot-files) are left out."""
    found: dict[str, os.stat_result] = {}
    if not root.is_dir():
        return found
    for top, dirs, files, dirfd in os.fwalk(root, follow_symlinks=False):
        rel_top = os.path.relpath(top, root)
        prefix = "" if rel_top == "." else f"{rel_top}/"
        if skip_hidden:
            dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if skip_hidden and name.startswith("."):
                continue
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                found[prefix + name] = st
    return found
