"""The notebook API keeps its sandbox kernel for the next `investigate()`, and the next run starts
from an empty namespace in its own workspace, on its own data."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from investigator import investigate
from investigator.kernels.pool import POOL, KernelPool
from tests.conftest import write_synth


@pytest.fixture
def empty_pool() -> Iterator[None]:
    POOL.close()
    yield
    POOL.close()


def test_a_second_investigation_reuses_the_kernel_with_nothing_left_from_the_first(
    tmp_path: Path, empty_pool: None
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first_data, _ = write_synth(
        tmp_path / "a", "segment_change", seed=3, segment={"channel": "social"}, factor=0.5
    )
    second_data, _ = write_synth(
        tmp_path / "b", "segment_change", seed=4, segment={"country": "DE"}, factor=0.4
    )
    first = investigate(first_data, "revenue", runs_dir=tmp_path / "runs", sandbox="local", quiet=True)
    [kernel] = POOL.idle("local")
    session = kernel.session_id
    planted = kernel.execute("leftover = 42\nleftover")
    assert planted.ok and planted.result == "42"

    second = investigate(second_data, "revenue", runs_dir=tmp_path / "runs", sandbox="local", quiet=True)

    assert POOL.idle("local") == [kernel] and kernel.session_id == session  # the same kernel, reused
    assert kernel.workdir == (second.folder / "workspace").resolve()
    gone = kernel.execute(
        "'leftover' in globals(), str(table.count().execute()) if 'table' in globals() else None"
    )
    assert gone.ok and gone.result is not None and gone.result.startswith("(False,")
    assert first.root_causes[0].segment == {"channel": "social"}
    assert second.root_causes[0].segment == {"country": "DE"}  # the second file, not the first
    assert second_data.name in (second.folder / "state.json").read_text()


def test_concurrent_runs_never_share_a_pooled_kernel() -> None:
    """Triage runs investigations from threads: a kernel taken is out of the pool until given back."""

    class Fake:
        backend, session_id = "local", "s"

        def __init__(self) -> None:
            self.users = 0
            self.shut = False

        def reuse(self, workdir: Path, data_files: object) -> None:
            pass

        def shutdown(self) -> None:
            self.shut = True

    pool = KernelPool(keep=2)
    kernels: list[Any] = [Fake(), Fake()]  # a kernel's reuse and shutdown only
    for k in kernels:
        pool.give(k)
    taken: list[object] = []
    barrier = threading.Barrier(4)

    def run() -> None:
        barrier.wait()
        taken.append(pool.take("local", Path("w"), []))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = [k for k in taken if k is not None]
    assert sorted(map(id, got)) == sorted(map(id, kernels)) and taken.count(None) == 2
    pool.give(kernels[0])
    pool.give(kernels[0])  # twice: still one entry
    assert pool.idle("local") == [kernels[0]]
