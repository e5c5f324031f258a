"""The recall model loads while a run checks its data, and only when there is something to recall."""

from __future__ import annotations

import logging
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


def test_loading_the_recall_model_leaves_the_root_logger_as_it_was() -> None:
    """`wordllama` calls `logging.basicConfig(level=INFO)` at import: in a process whose root logger
    had no handler (a notebook, the MCP server) every HTTP request to the model then printed a line."""
    import subprocess
    import sys

    code = (
        "import logging\n"
        "from investigator.memory.embed import WordLlamaEmbedder\n"
        "WordLlamaEmbedder.model()\n"
        "root = logging.getLogger()\n"
        "print(len(root.handlers), root.level)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", str(logging.WARNING)]
