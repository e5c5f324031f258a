"""The error tree: an error that leaves the run saved names the command that resumes it, with the
run's id once the runner has set it, and the same exception object travels on (its cause intact)."""

from __future__ import annotations

import pytest

from investigator.errors import DataError, InvestigatorError, PlannerError


def test_a_resumable_error_names_the_run_once_its_id_is_set() -> None:
    e = PlannerError("the endpoint kept failing", then="resume it later with")
    assert (
        str(e)
        == "the endpoint kept failing; the run is saved: resume it later with `investigate resume RUN_ID`"
    )
    e.run_id = "20250301-101500-0a1b2c"
    assert str(e) == (
        "the endpoint kept failing; the run is saved: resume it later with "
        "`investigate resume 20250301-101500-0a1b2c`"
    )
    assert e.args == ("the endpoint kept failing",)  # the message itself is not rewritten


def test_an_error_that_suggests_no_resume_reads_the_same_with_a_run_id() -> None:
    e = DataError("column 'revenue' not found; columns are: a, b", run_id="20250301-101500-0a1b2c")
    assert str(e) == "column 'revenue' not found; columns are: a, b"
    assert e.exit_code == 2


def test_setting_the_run_id_keeps_the_exception_and_its_cause() -> None:
    """What the runner does: set the id and re-raise the same object (it used to rebuild the
    exception from its text, losing its attributes and traceback)."""

    def fails() -> None:
        try:
            raise ConnectionRefusedError("refused")
        except ConnectionRefusedError as cause:
            raise PlannerError("gone", then="start the server again, then") from cause

    with pytest.raises(InvestigatorError) as raised:
        try:
            fails()
        except InvestigatorError as e:
            e.run_id = "r1"
            raise
    assert str(raised.value).endswith("start the server again, then `investigate resume r1`")
    assert isinstance(raised.value.__cause__, ConnectionRefusedError)
