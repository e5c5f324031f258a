"""The embeddings' copy beside the recall store (`memory/vectors.py`): kept current by every add,
used only while it matches the store, and never trusted over SQLite when it does not."""

from __future__ import annotations

import gc
import shutil
import sqlite3
from pathlib import Path

import numpy as np

import investigator.memory.index as index
from investigator.memory import vectors
from investigator.memory.embed import Embedder
from investigator.memory.index import state_of
from investigator.memory.models import NewMemory
from investigator.memory.store import MemoryStore

QUERY = "revenue fell in platform=ios; causes in country, platform, channel"


def memory(i: int, platform: str = "ios") -> NewMemory:
    return NewMemory(
        type="observation", text=f"revenue run {i}: segment_change in platform={platform}, -{10 + i}%",
        run_id=f"run-{i}", metric="revenue", kind="segment_change", segment={"platform": platform},
    )  # fmt: skip


def first_search(store: MemoryStore) -> list[tuple[str, float | None]]:
    """A search as the first of a new process: nothing cached in memory."""
    index._CACHE.clear()
    found = store.search(QUERY, 10, "revenue", latest_only=False, min_similarity=-1.0)
    return [(m.run_id, m.score) for m in found]


def copy_of(store: MemoryStore) -> vectors.Vectors | None:
    with sqlite3.connect(store.path) as db:
        state = state_of(db)
    return vectors.load(vectors.path_for(store.path, store.embedder.name), store.embedder.name, state)


def test_every_add_keeps_the_copy_current_with_the_stored_embeddings(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    for i in range(3):  # three runs, three transactions
        store.add([memory(i), memory(10 + i, "android")])
    copy = copy_of(store)
    assert copy is not None, "the copy went stale on an add"
    with sqlite3.connect(store.path) as db:
        rows = db.execute("SELECT id, embedding FROM memories ORDER BY id").fetchall()
    assert copy.ids.tolist() == [r[0] for r in rows]
    stored = np.stack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
    assert np.array_equal(copy.matrix, stored)


def test_recall_is_the_same_from_the_copy_as_from_sqlite(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    store.add([memory(i, ("ios", "android", "web")[i % 3]) for i in range(12)])
    with_copy = first_search(store)
    vectors.path_for(store.path, embedder.name).unlink()
    from_sqlite = first_search(store)
    assert len(with_copy) == 10 and with_copy == from_sqlite
    assert vectors.path_for(store.path, embedder.name).is_file(), (
        "the copy is made again for the next process"
    )


def test_a_copy_older_than_the_store_is_not_used(home: Path, embedder: Embedder) -> None:
    """Another process added a memory and its copy was lost: the old copy lacks the new id, so the
    embeddings come from SQLite and the new memory is found."""
    store = MemoryStore(home, embedder)
    store.add([memory(1, "android")])
    path = vectors.path_for(store.path, embedder.name)
    old = path.with_name("old.npz")
    shutil.copy(path, old)
    store.add([memory(2, "ios")])
    shutil.copy(old, path)  # the copy as it was before the second add
    assert copy_of(store) is None
    found = first_search(store)
    assert found[0][0] == "run-2"
    assert copy_of(store) is not None


def test_a_damaged_or_foreign_copy_is_ignored(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    store.add([memory(i) for i in range(4)])
    expected = first_search(store)
    path = vectors.path_for(store.path, embedder.name)
    path.write_bytes(b"PK\x03\x04 not a zip at all")
    assert first_search(store) == expected
    copy = copy_of(store)
    assert copy is not None
    vectors.save(path, "another-model", copy)  # right state and ids, another model's numbers
    assert vectors.load(path, embedder.name, copy.state) is None
    assert first_search(store) == expected


def test_wrong_numbers_in_a_stale_copy_never_reach_a_score(home: Path, embedder: Embedder) -> None:
    """A copy whose state is not the store's is not read, even where it has every id asked for."""
    store = MemoryStore(home, embedder)
    store.add([memory(i) for i in range(4)])
    expected = first_search(store)
    copy = copy_of(store)
    assert copy is not None
    count, high, low = copy.state
    poisoned = vectors.Vectors((count + 1, high, low), copy.ids, -copy.matrix)  # every score negated
    vectors.save(vectors.path_for(store.path, embedder.name), embedder.name, poisoned)
    assert first_search(store) == expected


def test_the_cycle_collector_is_back_on_after_a_recall(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    store.add([memory(1)])
    assert gc.isenabled()
    first_search(store)
    assert gc.isenabled()
