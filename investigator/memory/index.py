"""The recall index: what a search ranks (ids, embeddings, age, segment, kind, direction) for one
metric and source, read from the store once per process while nothing was added or removed.

A first recall among 10,000 memories reads about 10 MB; three things keep it near 50 ms: the
embeddings come from their copy beside the store (`vectors`), the rest from a covering index
(`memories_recall`: the table's own rows carry the 1 KB blobs), and Python's cycle collector
waits while the rows become tuples.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from investigator.memory import summaries, vectors
from investigator.memory.models import Lead
from investigator.memory.vectors import State


def recall_index(
    db: sqlite3.Connection,
    path: Path,
    model: str,
    metric: str | None,
    source: str | None,
    alias: str | None,
) -> Index:
    """The index of this model's memories of `metric` (and the general ones) and of `source` (or
    one named `alias`), when given; kept in this process until the store's state changes."""
    db.execute("BEGIN")  # one snapshot: the state, the rows and the embeddings agree
    try:
        state = state_of(db)
        key = (str(path.resolve()), model, metric, source, alias)
        cached = _CACHE.get(key)
        if cached is not None and cached.state == state:
            return cached
        where, args = summaries.scope(model, metric, source, alias)
        with collector_paused():
            rows = db.execute(
                f"SELECT id, created, segment, kind, direction FROM memories WHERE {where} ORDER BY id", args
            ).fetchall()
        ids = np.array([r[0] for r in rows], dtype=np.int64)
        matrix = vectors.matrix(db, path, model, state, ids)
    finally:
        db.execute("COMMIT")
    index = Index(
        state=state, ids=ids, matrix=matrix, created=np.array([r[1] for r in rows], dtype=float),
        segments=[str(r[2]) for r in rows], kinds=[r[3] for r in rows], directions=[r[4] for r in rows],
    )  # fmt: skip
    _CACHE[key] = index
    return index


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cycle collector off while 10,000 rows become tuples: in a process holding many
    objects (an embedding model, a run), the allocations set off a full collection that cost
    about 150 ms of a first recall's 200; the tuples hold no cycles."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def state_of(db: sqlite3.Connection) -> State:
    """Count, highest and lowest id: ids are never reused, so any add or removal changes it."""
    count, high, low = db.execute("SELECT count(*), max(id), min(id) FROM memories").fetchone()
    return int(count), high, low


@dataclass(frozen=True)
class Index:
    state: State
    ids: np.ndarray
    matrix: np.ndarray
    created: np.ndarray
    segments: list[str]
    kinds: list[str | None]
    directions: list[str | None]


def archived(
    db: sqlite3.Connection,
    model: str,
    leads: list[Lead],
    metric: str | None,
    source: str | None,
    alias: str | None,
) -> tuple[Index, dict[int, int]]:
    """Compacted memories about the leads' segments (of this metric and source), and their uses:
    what recognises "the same drop" once its memory is inside a summary."""
    rows = summaries.about(db, model, leads, metric, source, alias)
    matrix = vectors.stacked([r[1] for r in rows])
    index = Index(
        state=(0, None, None), ids=np.array([r[0] for r in rows], dtype=np.int64), matrix=matrix,
        created=np.array([r[2] for r in rows], dtype=float), segments=[str(r[3]) for r in rows],
        kinds=[r[4] for r in rows], directions=[r[5] for r in rows],
    )  # fmt: skip
    return index, {int(r[0]): int(r[6]) for r in rows if r[6]}


def lead_matches(index: Index, leads: list[Lead]) -> np.ndarray:
    """Per memory, how early a lead it matches (the first lead scores highest), else 0: only
    memories about a lead's segment are looked at, so this costs little among 10,000."""
    out = np.zeros(len(index.ids))
    if not leads:
        return out
    wanted: dict[str, list[tuple[int, Lead]]] = {}
    for n, lead in enumerate(leads):
        wanted.setdefault(json.dumps(lead.segment, sort_keys=True), []).append((len(leads) - n, lead))
    for i, segment in enumerate(index.segments):
        for weight, lead in wanted.get(segment, ()):
            if lead.matches(index.kinds[i], lead.segment, index.directions[i]):
                out[i] = max(out[i], weight)
    return out


_CACHE: dict[tuple[str, str, str | None, str | None, str | None], Index] = {}
