"""Embeddings for recall: a Protocol, the offline wordllama model, an OpenAI-compatible endpoint,
and an LRU cache in front of any of them."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Protocol

import numpy as np

DIM = 256


class Embedder(Protocol):
    """Texts in, one unit-length float32 row per text out."""

    name: str

    def embed(self, texts: list[str]) -> np.ndarray: ...


def unit(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1, norms)


class WordLlamaEmbedder:
    """The model inside the `wordllama` wheel (256 dimensions, numpy only), loaded offline: 0.4
    looks for its tokenizer under a misspelt folder and would then download it."""

    name = "wordllama-256"
    _model: Any = None
    _lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return unit(self.model().embed(texts, norm=True))

    @classmethod
    def model(cls) -> Any:
        with cls._lock:  # one load per process, however many threads ask
            if cls._model is None:
                with _root_logger_kept():
                    import wordllama
                    from wordllama import WordLlama

                cls._model = WordLlama.load(
                    cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=DIM
                )
        return cls._model


@contextmanager
def _root_logger_kept() -> Iterator[None]:
    """`wordllama` calls `logging.basicConfig(level=INFO)` at import: a library must not configure
    the process's root logger (every HTTP request to the model printed a line), so its handlers and
    level are put back as they were."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        for h in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(h)
        root.setLevel(level)


class OpenAIEmbedder:
    """Any OpenAI-compatible `/embeddings` endpoint (a local server or a hosted one)."""

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None) -> None:
        self.name, self.base_url, self.api_key = model, base_url, api_key

    def embed(self, texts: list[str]) -> np.ndarray:
        from openai import OpenAI

        client = OpenAI(base_url=self.base_url, api_key=self.api_key)
        answer = client.embeddings.create(model=self.name, input=texts)
        return unit(np.array([d.embedding for d in answer.data]))


class CachedEmbedder:
    """Remembers the last `size` texts' embeddings: a run's query and a compaction's chunks are
    asked for again and again."""

    def __init__(self, inner: Embedder, size: int = 4096) -> None:
        self.inner, self.size, self.name = inner, size, inner.name
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0

    def embed(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        fresh = dict(zip(missing, self.inner.embed(missing), strict=True)) if missing else {}
        with self._lock:
            self._cache.update(fresh)
            rows = [self._cache.get(t, fresh.get(t)) for t in texts]
            for t in texts:
                if t in self._cache:
                    self._cache.move_to_end(t)
            self.hits += len(texts) - len(missing)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        lost = [t for t, r in zip(texts, rows, strict=True) if r is None]  # evicted by another thread
        again = dict(zip(lost, self.inner.embed(lost), strict=True)) if lost else {}
        out = [r if r is not None else again[t] for t, r in zip(texts, rows, strict=True)]
        return np.stack(out) if out else np.zeros((0, DIM), dtype=np.float32)


_default: CachedEmbedder | None = None


def default_embedder() -> Embedder:
    """The process's cached offline embedder."""
    global _default
    if _default is None:
        _default = CachedEmbedder(WordLlamaEmbedder())
    return _default
