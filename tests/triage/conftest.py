"""Data the triage tests share: a generated table whose channel=social fell to 40% in its last week."""

from __future__ import annotations

from pathlib import Path

import pytest

from investigator.sources.synth import generate

DIMS = {"country": ["US", "GB", "DE", "FR"], "channel": ["organic", "social", "email"]}


@pytest.fixture(scope="module")
def drop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame, _ = generate(
        "segment_change", seed=3, dims=DIMS, segment={"channel": "social"}, factor=0.4, days=90
    )
    path = tmp_path_factory.mktemp("drop") / "drop.parquet"
    frame.to_parquet(path, index=False)
    return path
