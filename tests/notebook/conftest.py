"""One real investigation (local kernel, planted cause) shared by the notebook front-door tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from investigator import investigate
from investigator.front.notebook import Investigation
from investigator.sources.synth import generate

PLANTED = {"channel": "social"}


@pytest.fixture(scope="session")
def planted_run(tmp_path_factory: pytest.TempPathFactory) -> Investigation:
    """The API on a DataFrame: revenue with one channel halved in the last week."""
    frame, _ = generate("segment_change", seed=3, segment=PLANTED, factor=0.5)
    runs = tmp_path_factory.mktemp("notebook") / "runs"
    return investigate(
        frame, metric="revenue", window="7d", dimensions=["country", "platform", "channel"],
        runs_dir=runs, quiet=True,
    )  # fmt: skip


@pytest.fixture(scope="session")
def run_folder(planted_run: Investigation) -> Path:
    return planted_run.folder
