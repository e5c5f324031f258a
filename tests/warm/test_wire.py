"""The warm helper's one framing, over real socket pairs: what the client sends the helper reads,
descriptors included, and a bad message costs the reader nothing (no descriptor left open)."""

from __future__ import annotations

import os
import socket
import struct
from pathlib import Path

import pytest

from investigator.warm import wire


def test_a_run_request_is_two_messages_the_first_with_the_terminal() -> None:
    client, helper = socket.socketpair()
    with client, helper:
        read, write = os.pipe()
        wire.send(client, {"op": "run"}, [read, write])
        wire.send(client, {"argv": ["--metric", "revenue"], "env": {"KEY": "é"}})
        first, fds = wire.receive(helper, 3)
        second, none = wire.receive(helper)
        assert first == {"op": "run"} and len(fds) == 2 and none == []
        assert second == {"argv": ["--metric", "revenue"], "env": {"KEY": "é"}}
        os.write(fds[1], b"x")  # the passed descriptors are the pipe's own ends
        assert os.read(read, 1) == b"x"
        for fd in (read, write, *fds):
            os.close(fd)


def test_answers_are_lines_until_the_connection_closes() -> None:
    helper, client = socket.socketpair()
    with client:
        with helper:
            wire.answer(helper, {"pid": 12})
            wire.answer(helper, {"exit": 3})
        assert list(wire.answers(client)) == [{"pid": 12}, {"exit": 3}]


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        (struct.pack("!Q", 10) + b'{"op"', "cut short"),
        (struct.pack("!Q", wire.MAX_MESSAGE + 1), "too large"),
        (struct.pack("!Q", 2) + b"[]", "not an object"),
    ],
    ids=["cut-short", "too-large", "not-an-object"],
)
def test_a_bad_message_is_refused_and_its_descriptors_closed(
    raw: bytes, problem: str, tmp_path: Path
) -> None:
    client, helper = socket.socketpair()
    with client, helper:
        handle = os.open(tmp_path / "f", os.O_CREAT | os.O_RDONLY)
        socket.send_fds(client, [raw[:8]], [handle])
        client.sendall(raw[8:])
        client.shutdown(socket.SHUT_WR)
        os.close(handle)
        before = set(os.listdir("/proc/self/fd"))
        with pytest.raises(ValueError, match=problem):
            wire.receive(helper, 3)
        assert set(os.listdir("/proc/self/fd")) <= before


def test_the_other_end_of_a_socket_pair_is_this_user() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        assert wire.same_user(ours)
