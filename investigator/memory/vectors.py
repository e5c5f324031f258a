"""The embeddings of the recall store, kept beside it as one NumPy file per embedding model.

Reading 10,000 embeddings out of SQLite (one 1 KB blob a row) is most of a process's first recall
(about 50-100 ms); the same matrix from this file is a few milliseconds. The file is only a copy:
it holds the store's state when it was written (row count, highest and lowest id), and a reader
uses it only while the store is in that state. Ids are never reused, so any row added or removed
since changes the state, and the copy is made again from SQLite. Writers replace it whole
(write, then rename), so a reader sees one copy or another, never half of one. It is loaded
without pickles: a damaged or foreign file is ignored, never run.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.lib.npyio import NpzFile

State = tuple[int, int | None, int | None]  # count, max id, min id of the memories table


@dataclass(frozen=True)
class Vectors:
    """Every embedding of one model, by id (ascending)."""

    state: State
    ids: np.ndarray
    matrix: np.ndarray

    @staticmethod
    def empty(state: State) -> Vectors:
        return Vectors(state, np.zeros(0, dtype=np.int64), np.zeros((0, 0), dtype=np.float32))

    def rows(self, ids: np.ndarray) -> np.ndarray | None:
        """The matrix rows of `ids`, in their order; None when one is missing (a stale copy)."""
        if not len(ids):
            return np.zeros((0, self.matrix.shape[1] if self.matrix.ndim == 2 else 0), dtype=np.float32)
        at = np.searchsorted(self.ids, ids)
        if (at >= len(self.ids)).any() or (self.ids[np.minimum(at, len(self.ids) - 1)] != ids).any():
            return None
        return np.asarray(self.matrix[at], dtype=np.float32)

    def plus(self, state: State, ids: np.ndarray, matrix: np.ndarray) -> Vectors:
        """This copy with rows just added (ids above every id here), in the store's new state."""
        if len(self.ids) and len(ids) and ids.min() <= self.ids.max():
            raise ValueError("added ids must follow the stored ones")
        if len(self.ids) and self.matrix.shape[1] != matrix.shape[1]:
            raise ValueError("added embeddings have another width")
        stacked = np.concatenate([self.matrix, matrix]) if len(self.ids) else matrix
        return Vectors(state, np.concatenate([self.ids, ids]), stacked.astype(np.float32, copy=False))


def matrix(db: sqlite3.Connection, db_path: Path, model: str, state: State, ids: np.ndarray) -> np.ndarray:
    """The embeddings of `ids` (ascending), the store being in `state`: from the copy while it is
    current, else read from SQLite (every one of this model's, on `db`'s snapshot) and the copy
    made again for the next process."""
    path = path_for(db_path, model)
    copy = load(path, model, state)
    found = copy.rows(ids) if copy is not None else None
    if found is not None:
        return found
    rows = db.execute("SELECT id, embedding FROM memories WHERE model = ? ORDER BY id", (model,)).fetchall()
    if not rows:
        return Vectors.empty(state).matrix
    copy = Vectors(state, np.array([r[0] for r in rows], dtype=np.int64), stacked([r[1] for r in rows]))
    save(path, model, copy)
    found = copy.rows(ids)
    if found is None:  # the query that chose `ids` and this one share a snapshot: cannot happen
        raise RuntimeError("memory: an embedding is missing for a stored memory")
    return found


def stacked(blobs: list[bytes]) -> np.ndarray:
    """Stored embeddings (float32 blobs of one width) as a matrix, a row each; (0, 0) for none."""
    if not blobs:
        return np.zeros((0, 0), dtype=np.float32)
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)


def extend(
    db_path: Path, model: str, states: tuple[State, State], ids: np.ndarray, added: np.ndarray
) -> None:
    """Keep the copy current after an add (`states`: the store's before and after), when it was
    current before: the next process's first recall then reads it instead of the blobs."""
    before, after = states
    path = path_for(db_path, model)
    copy = Vectors.empty(before) if before[0] == 0 else load(path, model, before)
    if copy is not None:
        save(path, model, copy.plus(after, np.array(ids, dtype=np.int64), added.astype(np.float32)))


def path_for(db: Path, model: str) -> Path:
    """`memory.db` -> `memory.vectors-<model>.npz` (the model's name made safe for a file name)."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in model)[:80]
    return db.with_name(f"{db.stem}.vectors-{safe}.npz")


def load(path: Path, model: str, state: State) -> Vectors | None:
    """The copy at `path` if it is of `model` and the store is still in its state; else None."""
    try:
        with open(path, "rb") as file:
            f = np.load(file, allow_pickle=False)
            if not isinstance(f, NpzFile):  # a bare array: not a copy this module wrote
                return None
            if str(f["model"]) != model or tuple(_state(f["state"])) != state:
                return None
            ids, matrix = np.asarray(f["ids"], dtype=np.int64), np.asarray(f["matrix"], dtype=np.float32)
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):  # missing, damaged, not ours
        return None
    if matrix.ndim != 2 or len(ids) != len(matrix) or (len(ids) > 1 and (np.diff(ids) <= 0).any()):
        return None
    return Vectors(state, ids, matrix)


def save(path: Path, model: str, vectors: Vectors) -> None:
    """Replace the copy whole; a failure (a read-only or full disk) leaves the old one, which its
    state marks stale, and costs only speed."""
    count, high, low = vectors.state
    tmp: str | None = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            np.savez(
                out,
                model=np.array(model),
                state=np.array([count, -1 if high is None else high, -1 if low is None else low]),
                ids=vectors.ids.astype(np.int64, copy=False),
                matrix=vectors.matrix.astype(np.float32, copy=False),
            )
        os.replace(tmp, path)
        tmp = None
    except OSError:
        pass
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _state(raw: np.ndarray) -> State:
    count, high, low = (int(x) for x in raw.tolist())
    return count, None if high < 0 else high, None if low < 0 else low
