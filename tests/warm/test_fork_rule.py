"""The helper's fork rule: a fork copies only the thread that calls it, so the helper forks only
when no other thread is alive, and otherwise refuses and the run goes on cold. The helper runs in
this test's process, over a real socket, with a real client; the thread alive is the client's."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from investigator.front.entry import HELPER_MAIN
from investigator.warm.client import run_warm
from investigator.warm.daemon import ForkRefused, Helper, fork
from investigator.warm.place import helper_key, socket_path


@pytest.fixture
def helper() -> Iterator[Helper]:
    """A helper listening where `run_warm` looks for one (a short folder: a socket path has at most
    107 bytes); not serving: the test hands it each connection."""
    where = Path(tempfile.mkdtemp(prefix="iw-"))
    key = helper_key({"INVESTIGATOR_WARM_DIR": str(where)})
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(socket_path(where, key)))
    listener.listen(1)
    yield Helper(where, key, 60.0, listener)
    listener.close()
    shutil.rmtree(where, ignore_errors=True)


def test_fork_is_refused_while_another_thread_is_alive() -> None:
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="holds-a-lock")
    other.start()
    try:
        with pytest.raises(ForkRefused, match=r"other thread.*holds-a-lock"):
            fork()
    finally:
        stop.set()
        other.join()


def test_a_run_refused_a_fork_goes_on_cold_in_the_client(
    helper: Helper, capsys: pytest.CaptureFixture[str]
) -> None:
    """The client asks from a thread of this process while the helper handles the request: the
    helper forks nothing, says why in its log, and the client gets no pid (`run_warm` returns None:
    the caller runs the investigation itself)."""
    env = {"INVESTIGATOR_WARM_DIR": str(helper.folder)}
    answered: dict[str, int | None] = {}

    def client() -> None:
        answered["code"] = run_warm(["--metric", "revenue"], env, started=time.time(), main=HELPER_MAIN)

    asking = threading.Thread(target=client, name="client")
    asking.start()
    helper.listener.settimeout(30)
    conn, _ = helper.listener.accept()
    with conn:
        assert helper.handle(conn)
    asking.join(30)
    assert not asking.is_alive()
    assert answered == {"code": None}
    assert helper.children == {} and helper.served == 0
    said = capsys.readouterr().err
    assert "not forking with" in said and "client" in said


def test_no_worker_is_forked_while_another_thread_is_alive(
    helper: Helper, capsys: pytest.CaptureFixture[str]
) -> None:
    """The worker's sandbox server, started just before the fork, is stopped and its folder removed."""
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="holds-a-lock")
    other.start()
    try:
        assert helper._prefork() is None
    finally:
        stop.set()
        other.join()
    assert helper.failures == 1 and helper.worker is None
    assert "not forking" in capsys.readouterr().err
    assert not list(helper.spares.glob("spare-*"))
    assert not [pid for pid in _children() if str(helper.spares) in _cmdline(pid)]


def _children() -> list[int]:
    mine = str(os.getpid())
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "stat").read_text().rsplit(")", 1)[1].split()[1] == mine:
                found.append(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
