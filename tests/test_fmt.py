"""How numbers read: no signed zeros."""

from __future__ import annotations

from investigator.fmt import pct


def test_a_change_that_rounds_to_nothing_has_no_sign() -> None:
    assert pct(-0.00001) == "0.0%" and pct(0.0) == "0.0%"
    assert pct(-0.0006) == "-0.1%" and pct(0.123) == "+12.3%"


def test_two_compared_values_keep_the_digits_that_show_their_difference() -> None:
    from investigator.fmt import pair

    assert pair(1050.3, 1064.7) == ("1,050.3", "1,064.7")  # not 1.05k and 1.06k
    assert pair(1.886, 1.817) == ("1.886", "1.817")  # a price, not 1.9 and 1.8
    assert pair(0.6973, 0.4503) == ("0.697", "0.450")  # one precision for both
    assert pair(2643, 1145) == ("2,643", "1,145")  # whole numbers stay whole
    assert pair(3_555_970, 3_258_411) == ("3.56M", "3.26M")
    assert pair(float("nan"), 2.0) == ("n/a", "2.0")


def test_a_share_is_rounded_once_so_headline_and_evidence_agree() -> None:
    from investigator.fmt import share

    assert share(0.97537) == share(round(0.97537, 3)) == "98%"
    assert share(1.1381) == "114%" and share(-0.35) == "-35%"
