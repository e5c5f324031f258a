"""The recall store: atomic memories of past runs with their embeddings, in SQLite (WAL).

Several runs may finish at once, in threads or processes: every write is one short transaction,
and WAL lets readers go on while one writes, so a compaction never blocks an investigation. A file
that is not a database is set aside and a new one made, with a warning.

Ranking: cosine similarity, scaled down with age (half-life `HALF_LIFE_DAYS`) and up with use
(each recall counts); only memories above `MIN_SIMILARITY` are candidates, and of memories about
the same segment the most recent wins.
"""

from __future__ import annotations

import json
import math
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from investigator.memory import summaries, vectors
from investigator.memory.embed import Embedder
from investigator.memory.home import DB, aside, ensure_home
from investigator.memory.index import Index, archived, lead_matches, recall_index, state_of
from investigator.memory.models import Lead, NewMemory, StoredMemory
from investigator.memory.summaries import CHUNK_CHARS, CHUNK_OVERLAP, chunks

__all__ = ["CHUNK_CHARS", "CHUNK_OVERLAP", "MemoryStore", "chunks", "relevance"]

HALF_LIFE_DAYS = 90.0
USE_BOOST = 0.1  # per e-fold of recalls
MIN_SIMILARITY = 0.45
PER_SUMMARY = 10

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: the in-process index relies on it
    type TEXT NOT NULL,
    text TEXT NOT NULL,
    run_id TEXT NOT NULL,
    metric TEXT,
    kind TEXT,
    segment TEXT NOT NULL DEFAULT '{}',
    created REAL NOT NULL,
    last_access REAL,
    access_count INTEGER NOT NULL DEFAULT 0,
    summary INTEGER NOT NULL DEFAULT 0,
    sources TEXT NOT NULL DEFAULT '[]',
    model TEXT NOT NULL,
    embedding BLOB NOT NULL,
    data_source TEXT,  -- the data it is about (`source_key`); NULL: unknown, recalled by no run
    source_alias TEXT,  -- metrics.yaml `source:`: memories of sources named alike are shared
    direction TEXT  -- 'down' or 'up': which way the metric moved in its segment; NULL: unknown
);
CREATE INDEX IF NOT EXISTS memories_metric ON memories(metric);
CREATE INDEX IF NOT EXISTS memories_run ON memories(run_id);
CREATE INDEX IF NOT EXISTS memories_used ON memories(access_count);  -- recall reads uses, not blobs
"""
# what recall filters and ranks by, read from this index alone: a scan of the table itself reads
# every row's 1 KB embedding too (the embeddings come from `vectors`)
_RECALL_INDEX = """
CREATE INDEX IF NOT EXISTS memories_recall ON memories(
    model, metric, data_source, source_alias, id, created, segment, kind, direction
);
"""
_COLUMNS = (
    "id, type, text, run_id, metric, kind, segment, created, last_access, access_count, summary, "
    "data_source, source_alias, direction"
)


def relevance(similarity: float, age_days: float, uses: int) -> float:
    """Similarity, decayed with age and raised with use."""
    decay = math.pow(0.5, max(age_days, 0.0) / HALF_LIFE_DAYS)
    return similarity * decay * (1 + USE_BOOST * math.log1p(uses))


class MemoryStore:
    def __init__(self, home: Path, embedder: Embedder) -> None:
        self.home, self.embedder = home, embedder
        _, self.warnings = ensure_home(home)
        self.path = home / DB
        try:
            self._init()
        except sqlite3.DatabaseError as e:  # not a database, or damaged beyond reading
            moved = aside(self.path)
            for suffix in ("-wal", "-shm"):
                Path(f"{self.path}{suffix}").unlink(missing_ok=True)
            self.warnings.append(f"memory: {DB} was unreadable ({e}); moved to {moved.name} and made again")
            self._init()

    def _init(self) -> None:
        with self._connect() as db:
            db.executescript(_SCHEMA)
            db.executescript(summaries.SCHEMA)
            have = {r[1] for r in db.execute("PRAGMA table_info(memories)")}
            for column in ("data_source", "source_alias", "direction"):  # a store made before these
                if column not in have:
                    db.execute(f"ALTER TABLE memories ADD COLUMN {column} TEXT")
            db.executescript(_RECALL_INDEX)  # after the columns a store made before them lacks
            db.execute("SELECT count(*) FROM memories").fetchone()

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        try:
            db.execute("PRAGMA busy_timeout=30000")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            yield db
        finally:
            db.close()

    # writing -------------------------------------------------------------------------------------
    def add(
        self, memories: list[NewMemory], created: datetime | None = None, replace: bool = False
    ) -> list[int]:
        """Embed and store memories in one transaction; returns their ids. With `replace`, the
        runs' earlier memories (not people's decisions) go in the same transaction: a resumed run
        is remembered once."""
        if not memories:
            return []
        embedded = self._vectors([m.text for m in memories])
        when = (created or datetime.now(UTC)).timestamp()
        rows = [
            (m.type, m.text, m.run_id, m.metric, m.kind, json.dumps(m.segment, sort_keys=True), when,
             self.embedder.name, v.astype(np.float32).tobytes(), m.source, m.source_alias, m.direction)
            for m, v in zip(memories, embedded, strict=True)
        ]  # fmt: skip
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            if replace:
                runs = sorted({m.run_id for m in memories})
                db.execute(
                    f"DELETE FROM memories WHERE type != 'decision' AND summary = 0 AND run_id IN "
                    f"({','.join('?' * len(runs))})",
                    runs,
                )
            before = state_of(db)
            ids = [
                int(
                    db.execute(
                        "INSERT INTO memories (type, text, run_id, metric, kind, segment, created, model, "
                        "embedding, data_source, source_alias, direction) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                        row,
                    ).fetchone()[0]
                )
                for row in rows
            ]
            after = state_of(db)
            db.execute("COMMIT")
        vectors.extend(
            self.path, self.embedder.name, (before, after), np.array(ids, dtype=np.int64), embedded
        )
        return ids

    def _vectors(self, texts: list[str]) -> np.ndarray:
        """The texts' embeddings, refused if any number is not finite: a NaN compares false with
        every score, so such a memory could never be ranked."""
        vectors = self.embedder.embed(texts)
        if not np.isfinite(vectors).all():
            raise ValueError(f"the embedder {self.embedder.name} gave non-finite numbers: nothing stored")
        return vectors

    def forget(self, run_id: str) -> int:
        """Remove exactly one run's memories, compacted ones included: each summary holding some
        is rebuilt from the other runs' (a chunk made before originals were kept loses the run's
        lines). Returns how many of the run's memories went."""
        with self._connect() as db:
            plan = summaries.plan_forget(db, run_id)
        vectors = iter(self._vectors(plan.texts())) if plan.texts() else iter(())
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            n = summaries.apply_forget(db, plan, vectors, self.embedder.name)
            db.execute("COMMIT")
        return n

    def touch(self, ids: list[int], now: datetime | None = None) -> None:
        """These memories were recalled: their use counts, and they were last seen now."""
        if not ids:
            return
        when = (now or datetime.now(UTC)).timestamp()
        with self._connect() as db:
            for table in ("memories", "summarised"):  # a compacted memory recalled counts too
                db.executemany(
                    f"UPDATE {table} SET last_access = ?, access_count = access_count + 1 WHERE id = ?",
                    [(when, i) for i in ids],
                )

    # reading -------------------------------------------------------------------------------------
    def count(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def all(self, run_id: str | None = None) -> list[StoredMemory]:
        where, args = ("WHERE run_id = ?", (run_id,)) if run_id else ("", ())
        with self._connect() as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM memories {where} ORDER BY id", args).fetchall()
        return [_memory(r) for r in rows]

    def search(
        self,
        text: str,
        k: int = 5,
        metric: str | None = None,
        dimensions: list[str] | None = None,
        min_similarity: float = MIN_SIMILARITY,
        now: datetime | None = None,
        latest_only: bool = True,
        source: str | None = None,
        alias: str | None = None,
        leads: list[Lead] | None = None,
    ) -> list[StoredMemory]:
        """The `k` most relevant memories for `text`: of this metric (and the general ones), of
        this source (or one with the same alias) and about only these dimensions, when given; most
        relevant first, with `score` set. A memory matching one of `leads` (what this run found:
        the same segment, kind and direction) ranks before every other, the first lead's first.
        With `latest_only`, of memories about the same segment only the most recent is kept."""
        with self._connect() as db:
            live = recall_index(db, self.path, self.embedder.name, metric, source, alias)
            used = dict(db.execute("SELECT id, access_count FROM memories WHERE access_count > 0").fetchall())
            kept, kept_uses = archived(db, self.embedder.name, leads or [], metric, source, alias)
        if not len(live.ids) and not len(kept.ids):
            return []
        query = self.embedder.embed([text])[0]
        parts = [x for x in (live, kept) if len(x.ids)]
        similarity = np.concatenate([x.matrix @ query for x in parts])
        index = Index(
            state=live.state, ids=np.concatenate([x.ids for x in parts]), matrix=live.matrix,
            created=np.concatenate([x.created for x in parts]),
            segments=[s for x in parts for s in x.segments], kinds=[s for x in parts for s in x.kinds],
            directions=[s for x in parts for s in x.directions],
        ) if len(kept.ids) else live  # fmt: skip
        used |= kept_uses
        t = (now or datetime.now(UTC)).timestamp()
        age = (t - index.created) / 86400
        uses = np.array([used.get(int(i), 0) for i in index.ids], dtype=float) if used else 0.0
        score = similarity * 0.5 ** (np.maximum(age, 0) / HALF_LIFE_DAYS) * (1 + USE_BOOST * np.log1p(uses))
        matched = lead_matches(index, leads or [])
        score = np.where((similarity >= min_similarity) | (matched > 0), score, -np.inf)
        if dimensions is not None:
            dims = set(dimensions)
            fits = {s: set(json.loads(s)) <= dims for s in set(index.segments)}
            score = np.where(np.array([fits[s] for s in index.segments]), score, -np.inf)
        rank = score + matched * 10.0  # a score is at most about 1.5: a match comes first
        top = min(len(score), max(k * 10, 50))
        order = np.argpartition(-rank, top - 1)[:top]
        order = order[np.argsort(-rank[order])]
        picked: list[tuple[int, float, str]] = []
        newest: dict[str, tuple[float, int]] = {}  # segment and direction -> (created, index in picked)
        for i in order:
            if not np.isfinite(score[i]):
                break
            segment = index.segments[i]
            picked.append((int(index.ids[i]), float(score[i]), f"{segment}{index.directions[i] or ''}"))
            if segment != "{}" and latest_only:  # the same segment moving the same way: the most recent wins
                segment = picked[-1][2]
                seen = newest.get(segment)
                if seen is None or index.created[i] > seen[0]:
                    newest[segment] = (float(index.created[i]), len(picked) - 1)
        keep = [
            (mid, s) for j, (mid, s, seg) in enumerate(picked) if seg not in newest or newest[seg][1] == j
        ][:k]
        if not keep:
            return []
        scores, place = dict(keep), {mid: n for n, (mid, _) in enumerate(keep)}
        with self._connect() as db:
            marks = ",".join("?" * len(keep))
            sql = (
                f"SELECT {_COLUMNS} FROM memories WHERE id IN ({marks}) "
                f"UNION ALL SELECT {summaries.COLUMNS} FROM summarised WHERE id IN ({marks})"
            )
            found = db.execute(sql, list(scores) * 2).fetchall()
        out = [_memory(r).model_copy(update={"score": round(scores[r[0]], 4)}) for r in found]
        return sorted(out, key=lambda m: place[m.id])

    # compaction ----------------------------------------------------------------------------------
    def compact(self, older_than_days: float = 30, now: datetime | None = None) -> tuple[int, int]:
        """Summarise old memories, `PER_SUMMARY` at a time per metric, into chunks of
        `CHUNK_CHARS` characters (each embedded); the originals move beside them (`summaries`), so
        recognition and `forget` still see each one. Returns (summarised, chunks made). Each group
        is its own short transaction."""
        cutoff = (now or datetime.now(UTC)).timestamp() - older_than_days * 86400
        with self._connect() as db:
            rows = db.execute(
                f"SELECT {_COLUMNS}, sources FROM memories WHERE summary = 0 AND created < ? "
                "ORDER BY metric, data_source, source_alias, created",
                (cutoff,),
            ).fetchall()
        by_metric: dict[tuple[str | None, str | None, str | None], list[tuple[StoredMemory, list[str]]]] = {}
        for r in rows:
            m = _memory(r[:-1])
            by_metric.setdefault((m.metric, m.source, m.source_alias), []).append((m, json.loads(r[-1])))
        summarised = made = 0
        for key, items in by_metric.items():
            groups = [items[i : i + PER_SUMMARY] for i in range(0, len(items), PER_SUMMARY)]
            if len(groups) > 1 and len(groups[-1]) < 2:  # a lone last memory joins the group before
                groups[-2:] = [groups[-2] + groups[-1]]
            for group in groups:
                if len(group) < 2:
                    continue  # one memory summarised is the same memory
                made += self._summarise(key, group)
                summarised += len(group)
        return summarised, made

    def _summarise(
        self, key: tuple[str | None, str | None, str | None], group: list[tuple[StoredMemory, list[str]]]
    ) -> int:
        metric, source, alias = key
        lines = [(m.created.timestamp(), m.run_id, str(m.type), m.text) for m, _ in group]
        runs = list(dict.fromkeys([m.run_id for m, _ in group] + [s for _, src in group for s in src]))
        pieces = chunks(summaries.text_of(metric, lines))
        vectors = self._vectors(pieces)
        created = max(m.created for m, _ in group).timestamp()
        uses = sum(m.access_count for m, _ in group)
        name = f"summary-{uuid.uuid4().hex[:12]}"
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            marks = ",".join("?" * len(group))
            summaries.keep_originals(db, [m.id for m, _ in group], name)
            gone = db.execute(
                f"DELETE FROM memories WHERE id IN ({marks}) AND summary = 0", [m.id for m, _ in group]
            ).rowcount
            if gone != len(group):  # forgotten or compacted meanwhile: leave this group alone
                db.execute("ROLLBACK")
                return 0
            for piece, v in zip(pieces, vectors, strict=True):
                summaries.insert_chunk(
                    db,
                    self.embedder.name,
                    piece,
                    v,
                    name,
                    (metric, created, uses, source, alias),
                    json.dumps(runs),
                )
            db.execute("COMMIT")
        return len(pieces)


def _memory(r: tuple[object, ...]) -> StoredMemory:
    def when(x: object) -> datetime | None:
        return datetime.fromtimestamp(float(str(x)), UTC) if x is not None else None

    return StoredMemory.model_validate(
        {"id": r[0], "type": r[1], "text": r[2], "run_id": r[3], "metric": r[4], "kind": r[5],
         "segment": json.loads(str(r[6])), "created": when(r[7]), "last_access": when(r[8]),
         "access_count": r[9], "summary": bool(r[10]), "source": r[11], "source_alias": r[12],
         "direction": r[13]}
    )  # fmt: skip
