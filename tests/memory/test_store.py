"""The recall store: relevant not random, decay and use, recent wins, restarts, concurrency,
damage, compaction and forgetting — with the real offline embedding model."""

from __future__ import annotations

import multiprocessing
import subprocess
import sys
import threading
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from investigator.memory.embed import CachedEmbedder, Embedder, WordLlamaEmbedder
from investigator.memory.extract import nontrivial
from investigator.memory.models import NewMemory
from investigator.memory.store import CHUNK_CHARS, CHUNK_OVERLAP, MemoryStore, chunks
from investigator.testing import FakeEmbedder

NOW = datetime(2026, 3, 30, tzinfo=UTC)
DIMS = ["country", "platform", "channel", "category"]


def cause(text: str, run: str, metric: str = "revenue", **segment: str) -> NewMemory:
    return NewMemory(
        type="observation", text=text, run_id=run, metric=metric, kind="segment_change", segment=segment
    )


IOS = cause("revenue 2026-03-01..03-07: segment_change in platform=ios, 80% of the change (-120,000)",
            "run-ios", platform="ios")  # fmt: skip
QUERY = "revenue 2026-03-23..2026-03-29: why revenue moved; causes in country, platform, channel"


def test_memories_survive_a_process_restart(home: Path, embedder: Embedder) -> None:
    code = (
        "import sys; from pathlib import Path; from investigator.memory.store import MemoryStore;"
        "from investigator.memory.embed import default_embedder;"
        "from investigator.memory.models import NewMemory;"
        "MemoryStore(Path(sys.argv[1]), default_embedder()).add([NewMemory(type='observation', "
        "text='revenue fell 30% in platform=ios', run_id='other-process', metric='revenue', "
        "kind='segment_change', segment={'platform': 'ios'})])"
    )
    subprocess.run([sys.executable, "-c", code, str(home)], check=True, timeout=60)
    found = MemoryStore(home, embedder).search(QUERY, 5, "revenue", DIMS)
    assert [m.run_id for m in found] == ["other-process"]


def test_another_metric_on_other_data_is_not_recalled(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    store.add(
        [
            IOS,
            cause(
                "orders/sessions fell 12% in industry=health, 90% of the change",
                "run-rate",
                metric="conversion",
                industry="health",
            ),
            cause(
                "revenue rose 40% in industry=retail on the public dataset",
                "run-other-data",
                industry="retail",
            ),
        ],
        created=NOW - timedelta(days=20),
    )
    found = store.search(QUERY, 5, "revenue", DIMS, now=NOW)
    assert [m.run_id for m in found] == ["run-ios"]
    assert found[0].score is not None and found[0].score > 0


def test_relevance_decays_with_age_and_rises_with_use(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    old = store.add([cause(IOS.text, "old", platform="ios")], created=NOW - timedelta(days=365))
    new = store.add([cause(IOS.text, "new", channel="email")], created=NOW - timedelta(days=5))
    first = {m.run_id: m.score for m in store.search(IOS.text, 5, "revenue", now=NOW)}
    assert first["new"] > first["old"] * 4  # type: ignore[operator]  # about 4 half-lives apart
    for _ in range(20):
        store.touch(old)
    again = {m.run_id: m.score for m in store.search(IOS.text, 5, "revenue", now=NOW)}
    assert again["old"] > first["old"] and again["new"] == first["new"]  # type: ignore[operator]
    assert new and store.all("old")[0].access_count == 20


def test_the_more_recent_memory_of_a_segment_wins(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    store.add([IOS], created=NOW - timedelta(days=30))
    store.add(
        [NewMemory(type="observation", run_id="run-later", metric="revenue", kind="data_quality",
                   segment={"platform": "ios"},
                   text="revenue 2026-03-01..03-07: the platform=ios drop was missing data (2 days lost)")],
        created=NOW - timedelta(days=2),
    )  # fmt: skip
    found = store.search("revenue drop in platform=ios", 5, "revenue", DIMS, now=NOW)
    assert [m.run_id for m in found] == ["run-later"]


def test_trivial_memories_are_not_kept() -> None:
    assert not nontrivial(NewMemory(type="observation", text="the run finished on 2026-03-29", run_id="r"))
    assert not nontrivial(NewMemory(type="observation", text="run 20260329-101500-abc123 ended", run_id="r"))
    assert nontrivial(NewMemory(type="observation", text="revenue fell 12%", run_id="r"))
    assert nontrivial(IOS.model_copy(update={"text": "a drop in ios"}))


def _write_many(args: tuple[str, int, int]) -> int:
    home, worker, n = args
    store = MemoryStore(Path(home), CachedEmbedder(WordLlamaEmbedder()))
    for i in range(n):
        store.add([cause(f"revenue fell {i}% in channel=c{worker}", f"w{worker}-{i}", channel=f"c{worker}")])
    return n


def test_concurrent_writers_lose_nothing(home: Path, embedder: Embedder) -> None:
    MemoryStore(home, embedder)  # the schema, once
    threads = [threading.Thread(target=_write_many, args=((str(home), w, 15),)) for w in range(3)]
    for t in threads:
        t.start()
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = sum(pool.map(_write_many, [(str(home), w, 15) for w in (10, 11)]))
    for t in threads:
        t.join()
    assert done == 30
    assert MemoryStore(home, embedder).count() == 75
    assert (home / "memory.db-wal").exists() or "wal" in _journal(home)


def _journal(home: Path) -> str:
    import sqlite3

    return str(sqlite3.connect(home / "memory.db").execute("PRAGMA journal_mode").fetchone()[0])


def test_a_corrupt_database_is_set_aside_and_made_again(home: Path, embedder: Embedder) -> None:
    home.mkdir(parents=True)
    (home / "memory.db").write_bytes(b"this is not a database" * 100)
    store = MemoryStore(home, embedder)
    assert store.warnings and "memory.db" in store.warnings[0]
    store.add([IOS])
    assert store.count() == 1
    assert any(p.name.startswith("memory.db.corrupt-") for p in home.iterdir())


def test_a_home_that_is_a_file_is_made_a_folder_again(home: Path, embedder: Embedder) -> None:
    home.write_text("oops")
    store = MemoryStore(home, embedder)
    assert home.is_dir() and "not a folder" in store.warnings[0]
    store.add([IOS])
    assert store.count() == 1


def test_chunks_are_1600_characters_overlapping_by_320() -> None:
    text = "".join(chr(97 + i % 26) for i in range(5000))
    parts = chunks(text)
    assert all(len(p) <= CHUNK_CHARS for p in parts) and len(parts) == 4
    assert parts[0][-CHUNK_OVERLAP:] == parts[1][:CHUNK_OVERLAP]
    assert "".join(p[CHUNK_OVERLAP:] if i else p for i, p in enumerate(parts)) == text


def test_compact_summarises_old_memories_and_forget_removes_a_run(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    for i in range(20):
        store.add([cause(f"revenue fell {i + 5}% in channel=c{i} (run {i})", f"run-{i}", channel=f"c{i}")],
                  created=NOW - timedelta(days=100 - i))  # fmt: skip
    store.add([cause("revenue fell 9% in channel=fresh", "run-fresh", channel="fresh")], created=NOW)
    summarised, made = store.compact(older_than_days=30, now=NOW)
    assert summarised == 20 and made == 2  # ten memories into one chunk
    rows = store.all()
    assert len(rows) == 3 and sum(m.summary for m in rows) == 2
    summary = next(m for m in rows if m.summary)
    assert len(summary.text) <= CHUNK_CHARS and "run-0" in summary.text
    found = store.search("revenue fell in channel=c3", 3, "revenue", now=NOW)
    assert any(m.summary and "channel=c3 " in m.text for m in found)  # each chunk is embedded
    assert store.forget("run-3") == 1  # its memory, out of a summary rebuilt without it
    assert store.forget("run-fresh") == 1 and store.count() == 2
    texts = " ".join(m.text for m in store.all())
    assert "run run-3 " not in texts and "run run-2 " in texts and "run run-4 " in texts


def test_a_resumed_run_is_remembered_once_and_keeps_peoples_decisions(home: Path, embedder: Embedder) -> None:
    store = MemoryStore(home, embedder)
    decision = NewMemory(type="decision", text="a person approved f-1: ios is 2 days late", run_id="run-ios")
    store.add([IOS, decision])
    store.add([IOS], replace=True)
    assert sorted(m.type for m in store.all("run-ios")) == ["decision", "observation"]


def test_a_metric_with_nothing_remembered_recalls_nothing(home: Path, embedder: Embedder) -> None:
    """Memories of other metrics only: an empty result, not an error in the report's notes."""
    store = MemoryStore(home, embedder)
    assert store.search(QUERY, 5, "revenue", DIMS, now=NOW) == []  # an empty store
    store.add([cause("orders fell 9% in channel=email", "run-orders", metric="orders", channel="email")])
    assert store.search(QUERY, 5, "revenue", DIMS, now=NOW) == []


def test_an_embedding_that_is_no_number_is_not_stored(home: Path) -> None:
    """Regression (issue 25): a NaN embedding was stored; it compares false with every score."""
    store = MemoryStore(home, FakeEmbedder(non_finite=True))  # a remote endpoint's NaN, say
    with pytest.raises(ValueError, match="non-finite"):
        store.add([IOS, cause("orders fell 12% in country=DE", "run-de", "orders", country="DE")])
    assert store.count() == 0
