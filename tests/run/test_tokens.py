"""The token meter: typed counts that read and write the same flat JSON as the dicts they replaced,
so old checkpoints load and report.json keeps its `stats.tokens` object."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from investigator.run.tokens import TokenMeter, Usage

# stats.tokens as a run saved it before the model existed (a dict built by RunState.spent)
OLD = {
    "decide_in": 5120,
    "decide_out": 410,
    "compress_in": 2900,
    "compress_out": 300,
    "total": 8730,
    "context_max": 2410,
}


def test_an_old_checkpoints_counts_load_and_are_written_back_the_same() -> None:
    meter = TokenMeter.model_validate(OLD)
    assert (meter.total, meter.decide_in, meter.reflect_in, meter.context_max) == (8730, 5120, 0, 2410)
    assert json.loads(meter.model_dump_json()) == OLD


def test_the_meter_adds_usage_and_keeps_the_largest_context() -> None:
    meter = TokenMeter().spent(Usage().counted("decide", 900, 100), 2000)
    meter = meter.spent(Usage().counted("compress", 300, 50)).spent(Usage().counted("decide", 10, 0), 1500)
    assert meter.model_dump() == {
        "decide_in": 910, "decide_out": 100, "compress_in": 300, "compress_out": 50, "total": 1360,
        "context_max": 2000,
    }  # fmt: skip


def test_a_run_that_spent_nothing_says_so_like_before() -> None:
    """Before any step the meter is `{}`; the offline planner's steps leave a zero total and the
    context's size, as the dict did."""
    assert TokenMeter().model_dump() == {}
    assert TokenMeter().spent(Usage(), 812).model_dump() == {"total": 0, "context_max": 812}


def test_usage_between_two_readings_of_a_counter_is_their_difference() -> None:
    first = Usage().counted("decide", 900, 100)
    later = first.counted("reflect", 40, 4).counted("decide", 1, 1)
    assert (later - first).model_dump() == {
        "decide_in": 1,
        "decide_out": 1,
        "reflect_in": 40,
        "reflect_out": 4,
    }
    assert (later - later) == Usage() and (later - later).total == 0


def test_counts_are_values() -> None:
    usage = Usage(decide_in=1)
    with pytest.raises(ValidationError):
        usage.decide_in = 2  # type: ignore[misc]
