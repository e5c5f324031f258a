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


class _Broken:
    """A source that cannot be read; counts the threads that tried."""

    def __init__(self) -> None:
        self.threads: list[str] = []

    def describe(self) -> str:
        return "broken"

    def open(self, time_column: str) -> Any:
        self.threads.append(threading.current_thread().name)
        raise DataError("cannot read the data")


def test_a_background_read_that_failed_fails_the_check_in_the_caller(tmp_path: Path) -> None:
    _, spec = _spec(tmp_path)
    source = _Broken()
    checker = CauseChecker(source, spec, 0.25).start()
    with pytest.raises(DataError):  # the loop refuses the conclusion over this error
        checker.check([CAUSE])
    assert len(source.threads) == 2 and source.threads[1] == threading.current_thread().name
    assert checker.computed() is None
