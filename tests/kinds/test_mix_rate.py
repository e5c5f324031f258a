"""Mix and rate: one number per quantity. The dimension's whole mix and one value's part of it are
two quantities; the finding names each with its own share, and the value's share is the cause's."""

from __future__ import annotations

from investigator.analysis.ratio import MixPart, RatioDecomposition
from investigator.kinds import read, root_causes
from investigator.run.evidence import Evidence

from ..run.test_verdict import RATIO, move, split


def decomposition() -> RatioDecomposition:
    """channel's mix is 88% of a -0.01 change; paid's own part of it is 54%, organic's 34%."""
    by_channel = split("channel", -0.0088, -0.0012).model_copy(
        update={
            "parts": [
                MixPart(segment="paid", mix=-0.0054, weight_change=-0.12),
                MixPart(segment="organic", mix=-0.0034, weight_change=-0.05),
            ]
        }
    )
    return RatioDecomposition(
        metric="orders/sessions", baseline=0.05, current=0.04, change=-0.01,
        dimensions=[split("country", -0.001, -0.009), by_channel],
        driver="mix", dimension="channel", segment="paid", driver_share=0.88,
    )  # fmt: skip


def test_the_finding_gives_the_dimension_its_mix_share_and_the_value_its_own_part() -> None:
    d = decomposition()
    causes = root_causes(Evidence(movement=move(), ratio=d), RATIO)
    assert causes[0].segment == {"channel": "paid"} and causes[0].contribution == 0.54
    reading = read(d)
    assert reading is not None and reading.text is not None
    assert "the mix across channel (88% of the change)" in reading.text
    assert "channel=paid's part (54% of the change)" in reading.text  # the cause table's number
    assert "channel=paid (88%" not in reading.text
