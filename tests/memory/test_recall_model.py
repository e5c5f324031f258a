"""The recall model loads while a run checks its data, and only when there is something to recall."""

from __future__ import annotations

import threading

from investigator.config import Settings
from investigator.memory import load_recall_model
from investigator.memory.home import DB


def _loading() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("recall-model")]


def test_no_memories_no_model_loaded_ahead(msettings: Settings) -> None:
    load_recall_model(msettings)
    assert not _loading()


def test_with_memories_the_model_loads_in_the_background(msettings: Settings) -> None:
    from investigator.memory.embed import WordLlamaEmbedder

    msettings.home.mkdir(parents=True, exist_ok=True)
    (msettings.home / DB).touch()
    load_recall_model(msettings)
    for thread in _loading():
        thread.join(timeout=60)
    assert WordLlamaEmbedder._model is not None  # loaded, without recall asking for it
