"""The host's cause check reads the data ahead of need, in the background, and still fails closed."""

from __future__ import annotations

import threading
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from investigator.analysis.causes import RootCause
from investigator.errors import DataError
from investigator.request import Request, metric_definition
from investigator.run.checks import CauseChecker
from investigator.sources.files import FileSource
from investigator.sources.resolve import resolve
from investigator.sources.synth import generate
from investigator.testing import FrameSource

CAUSE = RootCause(kind="segment_change", segment={"channel": "email"}, contribution=1.0)


def _spec(tmp_path: Path) -> tuple[Path, Any]:
    frame, _ = generate("segment_change", seed=5, segment={"channel": "email"}, factor=0.5)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    request = Request(metric="revenue", data=str(path), end=date(2026, 3, 29))
    spec, _ = resolve(request, path, metric_definition("revenue"))
    return path, spec


def test_aggregates_read_ahead_are_those_read_on_demand(tmp_path: Path) -> None:
    path, spec = _spec(tmp_path)
    ahead = CauseChecker(FileSource(path), spec, 0.25).start()
    now = CauseChecker(FileSource(path), spec, 0.25)
    assert ahead.check([CAUSE]) == now.check([CAUSE])
    a, b = ahead.computed(), now.computed()
    assert a is not None and b is not None
    assert a.daily.equals(b.daily) and a.cube.equals(b.cube)


def test_a_background_read_that_failed_fails_the_check_in_the_caller(tmp_path: Path) -> None:
    _, spec = _spec(tmp_path)
    source = FrameSource(fail=DataError("cannot read the data"))
    checker = CauseChecker(source, spec, 0.25).start()
    with pytest.raises(DataError):  # the loop refuses the conclusion over this error
        checker.check([CAUSE])
    assert len(source.opened) == 2 and source.opened[1] == threading.current_thread().name
    assert checker.computed() is None
