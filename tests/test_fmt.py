"""How numbers read: no signed zeros."""

from __future__ import annotations

from investigator.fmt import pct


def test_a_change_that_rounds_to_nothing_has_no_sign() -> None:
    assert pct(-0.00001) == "0.0%" and pct(0.0) == "0.0%"
    assert pct(-0.0006) == "-0.1%" and pct(0.123) == "+12.3%"
