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
from investigator.run.evidence import Evidence
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


DRIVER = RootCause(kind="driver_change", driver="sessions", contribution=0.5)


def _counted(monkeypatch: pytest.MonkeyPatch, fail_outside_main: bool = False) -> list[str]:
    """Count the host's driver splits, by the thread that computed each."""
    from investigator.analysis.drivers import driver_split as real
    from investigator.kinds import driver_tree

    calls: list[str] = []

    def split(table: Any, spec: Any) -> Any:
        calls.append(threading.current_thread().name)
        if fail_outside_main and threading.current_thread() is not threading.main_thread():
            raise DataError("the engine went away")
        return real(table, spec)

    monkeypatch.setattr(driver_tree, "driver_split", split)
    return calls


def test_what_a_kind_checks_is_computed_once_while_the_kernel_runs_its_test(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from investigator.kinds import driver_tree

    path, spec = _spec(tmp_path)
    on_demand = CauseChecker(FileSource(path), spec, 0.25).check([DRIVER, DRIVER])
    calls = _counted(monkeypatch)
    checker = CauseChecker(FileSource(path), spec, 0.25)
    checker.ahead(Evidence(), driver_tree.KIND.tests["drivers"].code)
    first, second = checker.check([DRIVER]), checker.check([DRIVER, DRIVER])
    assert calls and calls[0] != threading.main_thread().name  # begun in the background
    assert len(calls) == 1  # and read by every check after it
    assert second == on_demand and first.checks[0] == on_demand.checks[0]
    assert first.checks[0].measured is not None  # a split that was measured, not an empty one


def test_code_no_kind_tests_starts_nothing_ahead(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path, spec = _spec(tmp_path)
    calls = _counted(monkeypatch)
    checker = CauseChecker(FileSource(path), spec, 0.25)
    checker.ahead(Evidence(), "split = driver_split(table, spec)\nemit(split)  # reworded by a model")
    assert checker.computed() is None and calls == []
    checker.check([DRIVER])
    assert calls == [threading.main_thread().name]


def test_a_computation_ahead_that_failed_is_run_again_by_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from investigator.kinds import driver_tree

    path, spec = _spec(tmp_path)
    on_demand = CauseChecker(FileSource(path), spec, 0.25).check([DRIVER])
    calls = _counted(monkeypatch, fail_outside_main=True)
    checker = CauseChecker(FileSource(path), spec, 0.25)
    checker.ahead(Evidence(), driver_tree.KIND.tests["drivers"].code)
    assert checker.check([DRIVER]) == on_demand
    assert len(calls) == 2 and calls[1] == threading.main_thread().name


@pytest.mark.parametrize(("cause", "starts"), [("duplicates", True), ("segment_change", False)])
def test_the_hosts_quality_checks_start_ahead_only_once_the_kernels_found_a_problem(
    tmp_path: Path, cause: str, starts: bool
) -> None:
    """Every run tests its data first and few have a problem to claim: the host's own quality
    checks (as long as the kernel's) start only after the kernel's found a material one."""
    from investigator.analysis.quality import quality_checks
    from investigator.kinds import data_quality

    frame, _ = generate(cause, seed=5, segment={"channel": "email"}, factor=0.5)
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    spec, _ = resolve(
        Request(metric="revenue", data=str(path), end=date(2026, 3, 29)), path, metric_definition("revenue")
    )
    table, daily, _ = CauseChecker(FileSource(path), spec, 0.25).aggregates()
    found = Evidence(quality=quality_checks(table, spec, daily))
    code = data_quality.KIND.tests["data_quality"].code
    assert not data_quality.KIND.starts_ahead(Evidence(), code)  # its own test: nothing found yet
    assert data_quality.KIND.starts_ahead(found, "season = seasonality(daily, spec)") is starts
