"""The hypothesis table agrees with the conclusion: what the headline names is never ruled out."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd

from investigator import investigate
from investigator.analysis.causes import RootCause
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.kinds import confirmed_by, seed_hypotheses
from investigator.run.hypotheses import Hypothesis, Status, with_status


def _yearly_two_regions() -> pd.DataFrame:
    """Fourteen years of two regions growing ~3% a year; in the last one region falls by 40%."""
    rng = np.random.default_rng(3)
    rows = []
    for year in range(2012, 2026):
        for region in ("Nord-Øst", "süd / west"):
            value = 1000 * 1.03 ** (year - 2012) * rng.normal(1, 0.02)
            rows.append(
                {
                    "year": year,
                    "region": region,
                    "sales": value * (0.6 if (year, region) == (2025, "Nord-Øst") else 1),
                }
            )
    return pd.DataFrame(rows)


def test_a_segment_the_verdict_names_is_confirmed_in_the_table(tmp_path: Path) -> None:
    inv = investigate(
        _yearly_two_regions(), metric="sales", time_column="year", window="1y",
        runs_dir=tmp_path, sandbox="inprocess", quiet=True,
    )  # fmt: skip
    report = inv.report
    assert [c.segment for c in report.root_causes] == [{"region": "Nord-Øst"}]
    segments = next(h for h in report.hypotheses if "concentrated" in h.statement)
    assert segments.status == "CONFIRMED" and "Nord-Øst" in segments.evidence


def _seeded() -> tuple[list[Hypothesis], dict[str, str]]:
    """The standard hypotheses of a one-dimension sales metric, and their ids by kind."""
    spec = AnalysisSpec(
        metric="sales", numerator="sales", time_column="date", dimensions=["region"],
        current=Window(start=date(2025, 1, 1), end=date(2025, 1, 7)),
        baseline=Window(start=date(2024, 12, 25), end=date(2024, 12, 31)),
    )  # fmt: skip
    hyps = seed_hypotheses(spec)
    return hyps, {h.kind: h.id for h in hyps}


def test_only_the_hypothesis_a_cause_stands_for_changes() -> None:
    hyps, kinds = _seeded()
    hyps = with_status(hyps, kinds["segments"], Status.RULED_OUT, "no segment stands out")
    hyps = with_status(hyps, kinds["broad_based"], Status.RULED_OUT, "segments did not move alike")
    cause = RootCause(kind="segment_change", segment={"region": "a"}, contribution=1.0, evidence="a: 10 -> 5")
    after = {h.kind: h for h in confirmed_by(hyps, [cause])}
    assert (
        after["segments"].status == Status.CONFIRMED and after["segments"].evidence == "concluded: a: 10 -> 5"
    )
    assert after["broad_based"].status == Status.RULED_OUT  # no cause stands for it: as it was
    assert after["data_quality"].status == Status.PENDING
    assert confirmed_by(hyps, []) == hyps


def test_what_an_analysis_confirmed_but_the_conclusion_does_not_use_is_not_left_confirmed() -> None:
    """A season found under a headline of "within normal variation", a data problem that pushed
    the metric the other way: the table must not tell a second story."""
    hyps, kinds = _seeded()
    hyps = with_status(hyps, kinds["seasonality"], Status.CONFIRMED, "a year earlier it moved alike")
    hyps = with_status(hyps, kinds["data_quality"], Status.CONFIRMED, "2 days missing")
    unmoved = RootCause(kind="no_change", evidence="-1.0% is within normal variation (z=-0.4)")
    after = {h.kind: h for h in confirmed_by(hyps, [unmoved])}
    assert after["seasonality"].status == Status.RULED_OUT
    assert after["seasonality"].evidence.startswith("not a cause: -1.0% is within normal variation")
    assert after["data_quality"].status == Status.RULED_OUT
    moved = RootCause(kind="segment_change", segment={"region": "a"}, contribution=1.0, evidence="a: 10 -> 5")
    after = {h.kind: h for h in confirmed_by(hyps, [moved])}
    assert after["data_quality"].status == Status.RULED_OUT
    assert "does not rest on it" in after["data_quality"].evidence
    assert after["segments"].status == Status.CONFIRMED
