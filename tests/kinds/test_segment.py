"""A segment beyond its fair share: past 300% of a flat total's net change, a share is never the
headline nor a cause's number: the words say what the segment moved and what the rest moved the
other way, and the cause carries its share of the gross movement."""

from __future__ import annotations

import re
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ..planners.test_real_shapes import kinds, run

END = date(2026, 3, 29)


def flat_total() -> pd.DataFrame:
    """Four regions of 1,000 a day for 120 days; in the last week north rises 60% while the other
    three fall 15% each: the total moves +2.9%, a net change a fifth of north's own."""
    rng = np.random.default_rng(1)
    rows = []
    for d in range(120):
        day = END - timedelta(days=119 - d)
        for region in ("north", "south", "east", "west"):
            for channel in ("web", "app"):
                v = 500 * (1 + rng.normal(0, 0.03))
                if d >= 113:
                    v *= 1.6 if region == "north" else 0.85
                rows.append((day, region, channel, v))
    return pd.DataFrame(rows, columns=["date", "region", "channel", "revenue"])


def test_a_flat_total_names_what_moved_and_what_offset_it(tmp_path: Path) -> None:
    frame = flat_total()
    rep = run(tmp_path, frame, "revenue", END, window="7d")
    assert kinds(rep)[0] == "segment_change" and rep.root_causes[0].segment == {"region": "north"}
    week = frame["date"] > END - timedelta(days=7)
    before = (frame["date"] > END - timedelta(days=14)) & ~week
    north = frame["region"] == "north"
    own = frame.loc[week & north, "revenue"].sum() - frame.loc[before & north, "revenue"].sum()
    rest = frame.loc[week & ~north, "revenue"].sum() - frame.loc[before & ~north, "revenue"].sum()
    assert own / (own + rest) > 3  # the share would read past 300%
    shares = [float(s) for s in re.findall(r"(\d+)% of the change", rep.conclusion)]
    assert all(s <= 300 for s in shares), rep.conclusion
    said = f"+{own / 1000:.2f}k while the rest moved {rest / 1000:.2f}k"
    assert said in rep.conclusion and said in rep.root_causes[0].evidence, rep.conclusion
    # the cause's share is of the gross movement, re-checked on the host in the same terms
    north = rep.root_causes[0]
    assert north.basis == "gross" and north.verified
    assert north.contribution == pytest.approx(own / (abs(own) + abs(rest)), abs=0.002)


def campaigns(seed: int = 5) -> pd.DataFrame:
    """Revenue by channel, campaign (150 values, all inside the paid channel; 20 in email) and
    device, for 90 days; in the last week every paid campaign runs at 60%."""
    rng = np.random.default_rng(seed)
    names = {
        "paid": [f"c{i:03d}" for i in range(150)],
        "organic": ["(none)"],
        "email": [f"e{i:02d}" for i in range(20)],
    }
    rows = []
    for d in range(90):
        day = END - timedelta(days=89 - d)
        for channel, level in (("paid", 30000), ("organic", 40000), ("email", 15000)):
            weights = rng.dirichlet(np.full(len(names[channel]), 2.0))
            for campaign, w in zip(names[channel], weights, strict=True):
                for device in ("ios", "android", "web"):
                    v = level * w / 3 * (1 + rng.normal(0, 0.15))
                    rows.append(
                        (
                            day,
                            channel,
                            campaign,
                            device,
                            max(v, 0.0) * (0.6 if d >= 83 and channel == "paid" else 1),
                        )
                    )
    return pd.DataFrame(rows, columns=["date", "channel", "campaign", "device", "revenue"])


def test_a_many_valued_dimension_does_not_hide_the_cause(tmp_path: Path) -> None:
    """A new user's default dimensions (every text column, a campaign id with 170 values among
    them) give the answer the right dimensions give: the channel, not campaigns or devices."""
    frame = campaigns()
    (tmp_path / "default").mkdir()
    (tmp_path / "chosen").mkdir()
    default = run(tmp_path / "default", frame, "revenue", END, window="7d")
    chosen = run(tmp_path / "chosen", frame, "revenue", END, window="7d", dimensions=["channel", "device"])
    assert [c.segment for c in default.root_causes[:1]] == [{"channel": "paid"}], default.conclusion
    assert [c.segment for c in chosen.root_causes[:1]] == [{"channel": "paid"}], chosen.conclusion


def test_the_host_checks_a_gross_share_in_its_own_terms() -> None:
    """A claim of north's share of the gross movement is re-measured as one: the right one passes,
    a wrong one and the net share relabelled as gross are refused."""
    from investigator.analysis.causes import RootCause
    from investigator.analysis.queries import open_table, period_cube
    from investigator.analysis.spec import AnalysisSpec, Window
    from investigator.kinds.verify import verify_causes

    frame = flat_total()
    spec = AnalysisSpec(
        metric="revenue", numerator="revenue", dimensions=["region", "channel"],
        current=Window(start=END - timedelta(days=6), end=END),
        baseline=Window(start=END - timedelta(days=13), end=END - timedelta(days=7)),
    )  # fmt: skip
    table = open_table(frame, "date")
    cube = period_cube(table, spec)
    week = frame["date"] > END - timedelta(days=7)
    before = (frame["date"] > END - timedelta(days=14)) & ~week
    north = frame["region"] == "north"
    own = frame.loc[week & north, "revenue"].sum() - frame.loc[before & north, "revenue"].sum()
    rest = frame.loc[week & ~north, "revenue"].sum() - frame.loc[before & ~north, "revenue"].sum()
    gross, net = own / (abs(own) + abs(rest)), own / (own + rest)

    def claim(share: float) -> RootCause:
        return RootCause(
            kind="segment_change", segment={"region": "north"}, contribution=share, basis="gross"
        )

    checked = verify_causes(table, pd.DataFrame(), cube, spec, [claim(gross), claim(0.95), claim(net)])
    assert [c.ok for c in checked.checks] == [True, False, False]
    assert checked.checks[0].measured == pytest.approx(gross, abs=1e-6)
