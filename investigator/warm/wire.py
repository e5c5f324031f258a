"""How the client, the helper and its worker talk over a Unix socket: one framing, used by all three.

A message is its length (8 bytes, network order), sent with the descriptors it passes (SCM_RIGHTS),
then that many bytes of JSON, one object. A run's request is two messages back to back: the helper
reads the first (`op` and the terminal's three descriptors) to route it; the second (arguments,
folder, environment: the secrets) stays in the socket for the run's own process to read, so the
long-lived helper never holds it. Answers go back one JSON object per line until the connection
closes.

Stdlib only: the thin client imports this before anything else.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
from collections.abc import Iterator, Sequence
from typing import Any

__all__ = ["MAX_MESSAGE", "answer", "answers", "receive", "same_user", "send"]

_LENGTH = struct.Struct("!Q")
MAX_MESSAGE = 8 * 2**20


def send(conn: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    """One message: its length (with `fds`, when there are any), then its JSON."""
    body = json.dumps(message).encode()
    if fds:
        socket.send_fds(conn, [_LENGTH.pack(len(body))], list(fds))
        conn.sendall(body)
    else:
        conn.sendall(_LENGTH.pack(len(body)) + body)


def receive(conn: socket.socket, most_fds: int = 0) -> tuple[dict[str, Any], list[int]]:
    """One message and the descriptors sent with it (at most `most_fds`; closed here when the
    message is not whole). ValueError for a message cut short, too large or not an object."""
    fds: list[int] = []
    try:
        if most_fds:
            head, got, _, _ = socket.recv_fds(conn, _LENGTH.size, most_fds)
            fds = list(got)
        else:
            head = b""
        head += _exactly(conn, _LENGTH.size - len(head))
        (size,) = _LENGTH.unpack(head)
        if size > MAX_MESSAGE:
            raise ValueError("message too large")
        message = json.loads(_exactly(conn, size))
        if not isinstance(message, dict):
            raise ValueError("not an object")
        return message, fds
    except BaseException:
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        raise


def _exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(min(65536, size - len(data)))
        if not chunk:
            raise ValueError("message cut short")
        data += chunk
    return data


def answer(conn: socket.socket, message: dict[str, Any]) -> None:
    """One answer: a line of JSON."""
    conn.sendall(json.dumps(message).encode() + b"\n")


def answers(conn: socket.socket) -> Iterator[dict[str, Any]]:
    """The answers on `conn`, one JSON object per line, until it closes (or fails)."""
    buffer = b""
    while True:
        try:
            chunk = conn.recv(4096)
        except InterruptedError:
            continue
        except OSError:
            return
        if not chunk:
            return
        *lines, buffer = (buffer + chunk).split(b"\n")
        for line in lines:
            with contextlib.suppress(ValueError):
                yield json.loads(line)


def same_user(conn: socket.socket) -> bool:
    """Whether the process at the other end runs as this user: never hand a stranger a terminal and
    an environment, nor take a run from one."""
    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
    return uid == os.getuid()
