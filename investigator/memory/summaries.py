"""Compacted memories: the chunks people and recall read, and the originals kept beside them.

A summary is text: ten memories in one chunk, embedded whole. Recognising "the same drop" needs
each memory's run, kind, segment and direction, and forgetting one run must leave the others, so
compaction moves the originals into `summarised` (with their embeddings) under the summary's key
(the chunks' `run_id`): recall asked with what a run found looks there too, and `forget` rebuilds
a summary from the originals that remain.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from investigator.memory.models import Lead

CHUNK_CHARS, CHUNK_OVERLAP = 1600, 320
Line = tuple[float, str, str, str]  # a memory in a summary: created, run, type, text
Meta = tuple[str | None, float, int, str | None, str | None]  # metric, created, uses, source, alias

SCHEMA = """
CREATE TABLE IF NOT EXISTS summarised (
    id INTEGER PRIMARY KEY,  -- the memory's id before compaction: ids are never reused
    summary TEXT NOT NULL,   -- the chunks' run_id
    type TEXT NOT NULL,
    text TEXT NOT NULL,
    run_id TEXT NOT NULL,
    metric TEXT,
    kind TEXT,
    segment TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    last_access REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    data_source TEXT,
    source_alias TEXT,
    direction TEXT,
    model TEXT NOT NULL,
    embedding BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS summarised_run ON summarised(run_id);
CREATE INDEX IF NOT EXISTS summarised_summary ON summarised(summary);
CREATE INDEX IF NOT EXISTS summarised_segment ON summarised(segment);
"""
_MOVED = (
    "id, type, text, run_id, metric, kind, segment, created, last_access, access_count, data_source, "
    "source_alias, direction, model, embedding"
)
COLUMNS = (  # as the store's _COLUMNS reads a memory: a compacted one counts as summarised
    "id, type, text, run_id, metric, kind, segment, created, last_access, access_count, 1, "
    "data_source, source_alias, direction"
)


def keep_originals(db: sqlite3.Connection, ids: list[int], summary: str) -> None:
    """Move these memories into `summarised` under the summary's key (inside the caller's
    transaction, before it deletes them)."""
    marks = ",".join("?" * len(ids))
    db.execute(
        f"INSERT INTO summarised (summary, {_MOVED}) SELECT ?, {_MOVED} FROM memories "
        f"WHERE id IN ({marks}) AND summary = 0",
        [summary, *ids],
    )


def text_of(metric: str | None, lines: list[Line]) -> str:
    """A summary's text from its memories' (created, run, type, text), oldest first."""
    from datetime import UTC, datetime

    body = [f"- {datetime.fromtimestamp(c, UTC):%Y-%m-%d} run {r} ({t}): {x}" for c, r, t, x in sorted(lines)]
    return f"Summary of {len(lines)} memories about {metric or 'every metric'}:\n" + "\n".join(body)


def affected(db: sqlite3.Connection, run_id: str) -> dict[str, list[Line]]:
    """The summaries that hold this run's memories, each with the (created, run, type, text) of
    the memories of other runs it holds: what it is rebuilt from."""
    keys = [r[0] for r in db.execute("SELECT DISTINCT summary FROM summarised WHERE run_id = ?", (run_id,))]
    return {
        key: db.execute(
            "SELECT created, run_id, type, text FROM summarised WHERE summary = ? AND run_id != ?",
            (key, run_id),
        ).fetchall()
        for key in keys
    }


def legacy(db: sqlite3.Connection, run_id: str) -> list[tuple[int, str, list[str]]]:
    """Chunks compacted before originals were kept that quote this run: (id, text, runs)."""
    rows = db.execute(
        "SELECT id, text, sources FROM memories WHERE summary = 1 AND EXISTS "
        "(SELECT 1 FROM json_each(memories.sources) WHERE value = ?) "
        "AND NOT EXISTS (SELECT 1 FROM summarised s WHERE s.summary = memories.run_id)",
        (run_id,),
    ).fetchall()
    return [(int(i), str(t), list(json.loads(s))) for i, t, s in rows]


def without(text: str, run_id: str) -> str | None:
    """A legacy chunk's text without the lines of this run; None when no memory line is left."""
    kept = [line for line in text.splitlines() if f" run {run_id} (" not in line]
    return "\n".join(kept) if any(line.startswith("- ") for line in kept) else None


def chunks(text: str, size: int = CHUNK_CHARS, overlap: int = CHUNK_OVERLAP) -> list[str]:
    """Pieces of `size` characters, each starting `overlap` before the last one ended."""
    if len(text) <= size:
        return [text]
    step = size - overlap
    return [text[i : i + size] for i in range(0, len(text) - overlap, step)]


def insert_chunk(
    db: sqlite3.Connection, model: str, piece: str, vector: np.ndarray, name: str, meta: Meta, runs: str
) -> None:
    metric, created, uses, source, alias = meta
    db.execute(
        "INSERT INTO memories (type, text, run_id, metric, created, access_count, summary, "
        "sources, model, embedding, data_source, source_alias) "
        "VALUES ('observation', ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?)",
        (piece, name, metric, created, uses, runs, model, vector.astype(np.float32).tobytes(), source, alias),
    )


@dataclass
class ForgetPlan:
    """What forgetting a run changes: summaries rebuilt (their chunks' text and what they held)
    and legacy chunks edited (None: deleted)."""

    run_id: str
    rebuild: dict[str, tuple[Meta, list[Line], list[str]]] = field(default_factory=dict)
    edited: list[tuple[int, str | None, list[str]]] = field(default_factory=list)

    def texts(self) -> list[str]:
        """Everything to embed, in the order `apply_forget` takes the vectors."""
        return [p for _, _, pieces in self.rebuild.values() for p in pieces] + [
            t for _, t, _ in self.edited if t is not None
        ]


def plan_forget(db: sqlite3.Connection, run_id: str) -> ForgetPlan:
    plan = ForgetPlan(run_id)
    for key, rest in affected(db, run_id).items():
        row = db.execute(
            "SELECT metric, created, access_count, data_source, source_alias FROM memories "
            "WHERE run_id = ? AND summary = 1 LIMIT 1",
            (key,),
        ).fetchone()
        meta: Meta = row or (None, max((c for c, *_ in rest), default=0.0), 0, None, None)
        plan.rebuild[key] = (meta, rest, chunks(text_of(meta[0], rest)) if rest else [])
    plan.edited = [
        (i, without(t, run_id), [r for r in runs if r != run_id]) for i, t, runs in legacy(db, run_id)
    ]
    return plan


def apply_forget(db: sqlite3.Connection, plan: ForgetPlan, vectors: Iterator[np.ndarray], model: str) -> int:
    """Inside the caller's transaction; returns how many of the run's memories went."""
    run_id = plan.run_id
    n = db.execute("DELETE FROM memories WHERE run_id = ? AND summary = 0", (run_id,)).rowcount
    n += db.execute("DELETE FROM summarised WHERE run_id = ?", (run_id,)).rowcount
    for key, (meta, rest, pieces) in plan.rebuild.items():
        db.execute("DELETE FROM memories WHERE run_id = ? AND summary = 1", (key,))
        runs = json.dumps(list(dict.fromkeys(r for _, r, _, _ in rest)))
        for piece in pieces:
            insert_chunk(db, model, piece, next(vectors), key, meta, runs)
    for i, text, runs_left in plan.edited:
        n += 1  # the run's lines in a chunk made before originals were kept
        if text is None:
            db.execute("DELETE FROM memories WHERE id = ?", (i,))
        else:
            db.execute(
                "UPDATE memories SET text = ?, embedding = ?, sources = ? WHERE id = ?",
                (text, next(vectors).astype(np.float32).tobytes(), json.dumps(runs_left), i),
            )
    return int(n)


def scope(
    model: str, metric: str | None, source: str | None, alias: str | None
) -> tuple[str, list[str | None]]:
    """The WHERE clause (and its arguments) of what one recall may see: this embedding model's
    memories of `metric` (and the general ones) and of `source` (or one named `alias`), when given."""
    where, args = "model = ?", list[str | None]([model])
    if metric is not None:
        where += " AND (metric = ? OR metric IS NULL)"
        args.append(metric)
    if source is not None:
        where += " AND (data_source = ? OR source_alias = ?)"
        args += [source, alias]
    return where, args


def about(
    db: sqlite3.Connection, model: str, leads: list[Lead], metric: str | None, source: str | None,
    alias: str | None,
) -> list[tuple[int, bytes, float, str, str | None, str | None, int]]:  # fmt: skip
    """Compacted memories about the leads' segments, of this metric and source: (id, embedding,
    created, segment, kind, direction, uses)."""
    segments = sorted({json.dumps(lead.segment, sort_keys=True) for lead in leads})
    if not segments:
        return []
    where, args = scope(model, metric, source, alias)
    where += f" AND segment IN ({','.join('?' * len(segments))})"
    args += segments
    sql = (
        f"SELECT id, embedding, created, segment, kind, direction, access_count FROM summarised WHERE {where}"
    )
    return list(db.execute(sql, args).fetchall())
