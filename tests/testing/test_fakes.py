"""The fakes shipped in `investigator.testing` are what the seams ask for, and behave as the real
implementations do where a test leans on them."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.errors import DataError
from investigator.memory.models import NewMemory
from investigator.memory.store import MemoryStore
from investigator.protocols import DataSource, Embedder, Notifier
from investigator.testing import FakeEmbedder, FakeNotifier, FrameSource
from investigator.triage.notify import deliver
from investigator.triage.secrets import Redactor


def test_the_frame_source_is_a_data_source_and_types_its_time_column() -> None:
    frame = pd.DataFrame({"day": ["2026-01-01", "2026-01-02"], "revenue": [1.0, 2.0]})
    source: DataSource = FrameSource(frame)
    assert isinstance(source, DataSource)
    table = source.open("day")
    assert table.schema()["day"].is_date()
    assert table.revenue.sum().to_pyarrow().as_py() == 3.0
    assert table.day.max().to_pyarrow().as_py() == date(2026, 1, 2)


def test_the_frame_source_fails_as_told_and_counts_who_opened_it() -> None:
    source = FrameSource(fail=DataError("cannot read the data"))
    with pytest.raises(DataError, match="cannot read"):
        source.open("day")
    source.close()
    assert source.opened == ["MainThread"] and source.closed == 1


def test_the_fake_embedder_puts_texts_sharing_words_near(tmp_path: Path) -> None:
    embedder: Embedder = FakeEmbedder()
    rows = embedder.embed(["revenue fell in ios", "revenue fell in ios app", "weather in paris"])
    assert rows.shape == (3, 256) and np.allclose(np.linalg.norm(rows, axis=1), 1)
    assert rows[0] @ rows[1] > 0.8 > rows[0] @ rows[2]
    store = MemoryStore(tmp_path, embedder)
    texts = ["revenue fell 20% in platform=ios", "orders rose in country=DE"]
    store.add(
        [NewMemory(type="observation", text=t, metric="revenue", run_id=f"r{i}") for i, t in enumerate(texts)]
    )
    assert store.search("revenue fell in ios", 1, "revenue", [])[0].text == texts[0]


def test_the_fake_embedder_can_answer_no_number() -> None:
    rows = FakeEmbedder(non_finite=True).embed(["a", "b"])
    assert np.isfinite(rows[0]).all() and np.isnan(rows[1, 0])


def test_the_fake_notifier_is_retried_as_a_real_one_and_keeps_what_it_was_sent() -> None:
    notifier: Notifier = FakeNotifier(replies=["HTTP 500"])
    sent = deliver(["json://hook/x"], "T", "b", notifier, Redactor(), retries=2, sleep=lambda s: None)
    assert sent[0].ok and sent[0].attempts == 2
    assert isinstance(notifier, FakeNotifier) and notifier.sent == [("json://hook/x", "T", "b")] * 2
    broken = FakeNotifier(fail=RuntimeError("boom"))
    sent = deliver(["json://hook/x"], "T", "b", broken, Redactor(), retries=2, sleep=lambda s: None)
    assert not sent[0].ok and "boom" in (sent[0].error or "") and len(broken.sent) == 2
