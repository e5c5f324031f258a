"""The shapes real tables take, made here, each with the answer an analyst checking with pandas
would give (issue 24): broad moves are broad and size is not a cause; significance on the recent
span of the series' own history; short histories said as such; single series concluded; data
problems only when they moved the metric the way it moved; windows past the data's end answered.

Every case runs the whole offline investigation in process on a generated file, and reads the
report a person would read."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.kernels.inprocess import InProcessKernel
from investigator.planners.offline import OfflinePlanner
from investigator.report.model import Report
from investigator.request import Request
from investigator.run.hypotheses import Status
from investigator.runner import run_loop
from investigator.runs import new_run


def run(tmp_path: Path, frame: pd.DataFrame, metric: str, end: date, **fields: object) -> Report:
    path = tmp_path / "data.parquet"
    frame.to_parquet(path, index=False)
    settings = load_settings(runs_dir=tmp_path / "runs")
    request = Request(metric=metric, data=str(path), end=end, **fields)
    return run_loop(
        new_run(request, path, settings, "offline"), settings, OfflinePlanner(), InProcessKernel()
    )


def kinds(report: Report) -> list[str]:
    return [c.kind for c in report.root_causes]


def monthly(values: dict[str, np.ndarray], start: str = "2015-01-01", dim: str = "region") -> pd.DataFrame:
    """Long monthly rows (date, dim, value) from one array per segment."""
    n = len(next(iter(values.values())))
    dates = pd.date_range(start, periods=n, freq="MS")
    return pd.concat(
        [pd.DataFrame({"date": dates, dim: name, "value": v}) for name, v in values.items()],
        ignore_index=True,
    )


def noisy(rng: np.random.Generator, level: float, n: int, sd: float = 0.03) -> np.ndarray:
    return level * (1 + rng.normal(0, sd, n))


# --- 1. broad moves are broad; size is not a cause ------------------------------------------------


def proportional_fall(segments: int, seed: int = 1, fall: float = 0.85) -> pd.DataFrame:
    """`segments` regions of very different sizes (the largest many times the smallest), monthly
    for 8 years; in the last 12 months every one runs at `fall` of its level, with small noise."""
    rng = np.random.default_rng(seed)
    values = {}
    for i in range(segments):
        v = noisy(rng, 1000.0 * (i + 1) ** 1.5, 96, 0.02)
        v[-12:] *= fall * (1 + rng.normal(0, 0.01))
        values[f"r{i:02d}"] = v
    return monthly(values)


def test_a_proportional_fall_over_4_segments_is_broad_not_the_largest_segment(tmp_path: Path) -> None:
    report = run(tmp_path, proportional_fall(4), "value", date(2022, 12, 31), window="1y")
    assert kinds(report)[0] == "broad_based", report.root_causes
    assert not any(c.kind == "segment_change" for c in report.root_causes)  # the largest is 57% of it
    assert "all 4 region values fell" in report.root_causes[0].evidence
    assert report.segments and report.segments[0].segment == {"region": "r03"}  # still ranked


def test_a_proportional_fall_over_48_segments_is_broad(tmp_path: Path) -> None:
    report = run(tmp_path, proportional_fall(48, seed=2), "value", date(2022, 12, 31), window="1y")
    assert kinds(report)[0] == "broad_based", report.root_causes
    assert "48 region values fell" in report.root_causes[0].evidence


def test_an_identifier_like_dimension_does_not_change_a_broad_answer(tmp_path: Path) -> None:
    base = proportional_fall(4, seed=3)
    rng = np.random.default_rng(3)
    frame = base.loc[base.index.repeat(30)].assign(value=lambda f: f["value"] / 30)  # 30 receipts a month
    frame["store_id"] = [f"S{int(x):05d}" for x in rng.integers(0, 20_000, len(frame))]
    report = run(tmp_path, frame, "value", date(2022, 12, 31), window="1y", dimensions=["region", "store_id"])
    assert kinds(report)[0] == "broad_based", report.root_causes


def test_one_segment_falling_six_times_as_fast_is_named_not_broad(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    values = {name: noisy(rng, level, 96, 0.02) for name, level in (("a", 5000), ("b", 3000), ("c", 2000))}
    values["a"][-12:] *= 0.70  # -30%: the rest -5%
    values["b"][-12:] *= 0.95
    values["c"][-12:] *= 0.95
    report = run(tmp_path, monthly(values), "value", date(2022, 12, 31), window="1y")
    first = report.root_causes[0]
    assert (first.kind, first.segment) == ("segment_change", {"region": "a"}), report.root_causes
    assert "broad_based" not in kinds(report)


def test_every_groups_average_rising_alike_is_broad_for_a_ratio(tmp_path: Path) -> None:
    rng = np.random.default_rng(5)
    rows = []
    for d in pd.date_range("2015-01-01", periods=96, freq="MS"):
        for i, city in enumerate(["x", "y", "z", "w"]):
            sales = 100.0 * (i + 1) * (1 + rng.normal(0, 0.02))
            price = (200 + 30 * i) * (1.10 if d.year == 2022 else 1.0) * (1 + rng.normal(0, 0.01))
            rows.append({"date": d, "city": city, "sales": sales, "volume": sales * price})
    report = run(tmp_path, pd.DataFrame(rows), "volume/sales", date(2022, 12, 31), window="1y")
    assert kinds(report)[0] == "broad_based", report.root_causes


# --- 2. significance a person would accept ------------------------------------------------------


def test_a_record_fall_in_a_long_series_with_a_wild_early_era_is_not_normal_variation(tmp_path: Path) -> None:
    """A century of years: single digits swinging +-50% in the first decades, a level 100-fold
    higher and steady (+-2%) since; the last year falls 40%, the largest fall in 50 years."""
    rng = np.random.default_rng(6)
    years = np.arange(1900, 2021)
    level = np.where(
        years < 1950, 5 * (1 + rng.normal(0, 0.5, len(years))), 500 * (1 + rng.normal(0, 0.02, len(years)))
    )
    level = np.abs(level) + 1
    level[-1] = level[-2] * 0.6
    frame = pd.DataFrame({"year": years, "value": level})
    report = run(tmp_path, frame, "value", date(2020, 12, 31), window="1y", time_column="year")
    assert report.movement.significant and report.movement.z is not None and report.movement.z < -3
    assert kinds(report)[0] != "no_change", report.root_causes
    assert report.confidence == "high"


def test_a_short_history_is_said_and_the_best_explanation_still_given(tmp_path: Path) -> None:
    """Six months of data: one segment triples in the last month. Too little history to score the
    move, which the conclusion says, and the segment is still named."""
    rng = np.random.default_rng(7)
    values = {name: noisy(rng, level, 6, 0.05) for name, level in (("a", 300), ("b", 900), ("c", 600))}
    values["a"][-1] *= 3
    report = run(tmp_path, monthly(values, start="2024-01-01"), "value", date(2024, 6, 30), window="1mo")
    assert report.root_causes[0].segment == {"region": "a"}, report.root_causes
    assert "too few" in report.conclusion and "within normal variation" not in report.conclusion
    assert report.confidence != "high"


def test_a_small_move_on_a_short_history_is_not_called_normal_variation(tmp_path: Path) -> None:
    values = {"a": np.array([100.0, 103, 99, 101, 100, 102]), "b": np.array([200.0, 198, 203, 199, 201, 203])}
    report = run(tmp_path, monthly(values, start="2024-01-01"), "value", date(2024, 6, 30), window="1mo")
    assert "within normal variation" not in report.conclusion and "too few" in report.conclusion
    assert report.confidence == "low"  # whatever it names, it cannot tell it from noise


def test_one_segment_far_outside_its_own_history_carries_a_noisy_total(tmp_path: Path) -> None:
    """A yearly panel whose national total swings wildly (epidemic years) so that a +40% year is
    ordinary for it; this year one state quadruples while the rest fall a little."""
    rng = np.random.default_rng(8)
    years = pd.date_range("1950-01-01", periods=41, freq="YS")
    epidemic = np.exp(rng.normal(0, 0.6, len(years)))  # the whole country's cycles
    values = {}
    for i in range(10):
        own = np.exp(rng.normal(0, 0.15, len(years)))
        values[f"s{i}"] = 1000 * (1 + i % 3) * epidemic * own
    values["s0"][-1] = values["s0"][-2] * 4.0
    for i in range(1, 10):
        values[f"s{i}"][-1] = values[f"s{i}"][-2] * 0.95
    frame = monthly(values, dim="state").assign(date=lambda f: np.tile(years, 10))
    report = run(tmp_path, frame, "value", date(1990, 12, 31), window="1y")
    first = report.root_causes[0]
    assert (first.kind, first.segment) == ("segment_change", {"state": "s0"}), (
        report.movement,
        report.root_causes,
    )
    assert report.confidence != "high"


def test_values_of_one_dimension_offsetting_each_other_are_no_change(tmp_path: Path) -> None:
    """A reclassification: economy seats become business seats, the total flat and ordinary."""
    rng = np.random.default_rng(9)
    values = {"economy": noisy(rng, 1000, 96, 0.05), "business": noisy(rng, 100, 96, 0.05)}
    values["economy"][-1] -= 300
    values["business"][-1] += 290
    report = run(tmp_path, monthly(values, dim="cls"), "value", date(2022, 12, 31), window="1mo")
    assert kinds(report)[0] == "no_change", report.root_causes
    assert report.segments[0].segment == {"cls": "economy"}


def test_a_flat_total_says_which_segment_fell_far_outside_its_history_and_was_offset(tmp_path: Path) -> None:
    """South falls 20% while north grows enough to hold the total: still no change in the total,
    but the headline names the fall and its offset instead of "no root cause to find"."""
    rng = np.random.default_rng(4)
    values = {"north": noisy(rng, 3000, 96, 0.02), "south": noisy(rng, 2000, 96, 0.02)}
    values["south"][-1] = values["south"][-2] * 0.8
    values["north"][-1] = values["north"][-2] + values["south"][-2] * 0.2
    report = run(tmp_path, monthly(values), "value", date(2022, 12, 31), window="1mo")
    assert kinds(report)[0] == "no_change", report.root_causes
    fell = values["south"][-2] - values["south"][-1]
    assert f"but inside it region=south fell {fell:,.1f} (-20.0%), far outside its own history (z=-" in (
        report.conclusion
    ), report.conclusion
    assert "and offset it." in report.conclusion and "no root cause to find" not in report.conclusion


# --- 3. a single series -------------------------------------------------------------------------


def test_a_single_series_with_a_season_concludes_seasonal_without_localizing(tmp_path: Path) -> None:
    rng = np.random.default_rng(10)
    dates = pd.date_range("2012-01-01", "2021-11-01", freq="MS")
    season = np.where(dates.month == 11, 0.88, 1.0)  # every November falls 12% against October
    frame = pd.DataFrame({"month": dates, "passengers": 400 * season * (1 + rng.normal(0, 0.01, len(dates)))})
    report = run(tmp_path, frame, "passengers", date(2021, 11, 30), window="1mo", time_column="month")
    assert report.status == "concluded" and kinds(report)[0] == "seasonality", report.root_causes
    assert not any(h.status in (Status.PENDING, Status.INVESTIGATING) for h in report.hypotheses)
    assert len(report.hypotheses) == 2


def test_a_single_series_shock_is_the_whole_series_moving(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    days = pd.date_range("2016-01-01", "2017-10-03", freq="D")
    deaths = rng.poisson(85, len(days)).astype(float)
    deaths[-14:] *= 1.4
    report = run(
        tmp_path, pd.DataFrame({"date": days, "deaths": deaths}), "deaths", date(2017, 10, 3), window="2w"
    )
    first = report.root_causes[0]
    assert report.status == "concluded" and (first.kind, first.segment) == ("segment_change", {})
    assert first.contribution == 1.0 and report.confidence == "high"


# --- 4. data problems that really explain the move ----------------------------------------------


def test_missing_rows_that_push_the_other_way_are_not_the_cause(tmp_path: Path) -> None:
    """Every city's sales rose 10%; two cities have no rows in the window. Their absence pulled
    the total down, yet it rose: not a data problem that explains the rise."""
    rng = np.random.default_rng(12)
    values = {f"c{i}": noisy(rng, 500 + 100 * i, 96, 0.03) for i in range(8)}
    for v in values.values():
        v[-1] *= 1.25
    frame = monthly(values, dim="city")
    last = frame["date"] == frame["date"].max()
    frame = frame[~(last & frame["city"].isin(["c0", "c1"]))]
    report = run(tmp_path, frame, "value", date(2022, 12, 31), window="1mo")
    assert "data_quality" not in kinds(report), report.root_causes


def test_a_ratio_fall_is_not_explained_by_a_missing_below_average_segment(tmp_path: Path) -> None:
    """Conversion (orders/sessions): segment "low" converts at 3% against 5% elsewhere and has no
    rows this week, which raises the ratio; the ratio fell because "web" converts less."""
    rng = np.random.default_rng(13)
    rows = []
    for d in pd.date_range("2026-01-01", "2026-03-29", freq="D"):
        for seg, rate in (("low", 0.03), ("web", 0.05), ("app", 0.05)):
            if seg == "low" and d > pd.Timestamp("2026-03-22"):
                continue
            sessions = 1000 * (1 + rng.normal(0, 0.03))
            r = rate * (0.4 if seg == "web" and d > pd.Timestamp("2026-03-22") else 1.0)
            rows.append({"date": d, "channel": seg, "sessions": sessions, "orders": sessions * r})
    report = run(tmp_path, pd.DataFrame(rows), "orders/sessions", date(2026, 3, 29), window="7d")
    assert "data_quality" not in kinds(report), report.root_causes
    assert report.root_causes[0].segment == {"channel": "web"}, report.root_causes


def test_a_window_past_the_data_end_is_answered_with_the_missing_days(tmp_path: Path) -> None:
    rng = np.random.default_rng(14)
    days = pd.date_range("2016-01-01", "2018-04-15", freq="D")
    frame = pd.DataFrame({"date": days, "deaths": rng.poisson(85, len(days)).astype(float)})
    report = run(tmp_path, frame, "deaths", date(2018, 4, 30), window="1mo")
    first = report.root_causes[0]
    assert (first.kind, first.detail) == ("data_quality", "missing_data"), report.root_causes
    assert "the data ends 2018-04-15" in first.evidence
    assert 0.8 <= (first.contribution or 0) <= 1.0


def test_a_noisy_last_stretch_inside_the_data_is_not_incomplete_recent_data(tmp_path: Path) -> None:
    """Late loads leave the data's last periods short; a window that ends a year before the data
    does is not waiting for any load."""
    rng = np.random.default_rng(15)
    year = np.tile([1.1, 1.2, 1.2, 1.1, 1.0, 0.9, 0.8, 0.8, 0.9, 1.0, 1.0, 1.05], 10)  # a season
    values = {f"c{i}": noisy(rng, 1000, 120, 0.03) * year
              for i in range(4)}  # fmt: skip
    report = run(tmp_path, monthly(values, dim="city"), "value", date(2022, 12, 31), window="1y")
    assert not any(c.detail == "incomplete_recent_data" for c in report.root_causes), report.root_causes


def test_a_series_that_starts_being_reported_is_new_coverage_not_growth(tmp_path: Path) -> None:
    rng = np.random.default_rng(16)
    values = {
        "beef": noisy(rng, 1200, 96, 0.03),
        "pork": noisy(rng, 1000, 96, 0.03),
        "broilers": np.zeros(96),
    }
    values["broilers"][-12:] = noisy(rng, 300, 12, 0.05)
    report = run(tmp_path, monthly(values, dim="type"), "value", date(2022, 12, 31), window="1y")
    first = report.root_causes[0]
    assert (first.kind, first.detail, first.segment) == ("data_quality", "new_coverage", {"type": "broilers"})


# --- 6. one story -------------------------------------------------------------------------------


def test_a_broad_headline_has_no_ruled_out_broad_hypothesis_and_no_change_rules_out_what_it_does_not_use(
    tmp_path: Path,
) -> None:
    report = run(tmp_path, proportional_fall(4, seed=17), "value", date(2022, 12, 31), window="1y")
    broad = next(h for h in report.hypotheses if "broad-based" in h.statement)
    assert broad.status == Status.CONFIRMED
    assert not any(h.status == Status.CONFIRMED for h in report.hypotheses if "concentrated" in h.statement)


# --- 5. mix and rate sized right ----------------------------------------------------------------


def test_a_mix_shift_over_20_destinations_names_each_with_its_own_part(tmp_path: Path) -> None:
    """Average fare (revenue/bookings) over 20 destinations with fares 100..290: this week the
    bookings tilt toward the four cheapest (x2 each) while every fare holds. Each named
    destination carries its own part of the mix, and the parts of all 20 add up to the mix."""
    rng = np.random.default_rng(18)
    rows = []
    for d in pd.date_range("2026-01-01", "2026-03-29", freq="D"):
        for i in range(20):
            bookings = (
                100 * (1 + rng.normal(0, 0.02)) * (2.0 if i < 4 and d > pd.Timestamp("2026-03-22") else 1)
            )
            rows.append(
                {"date": d, "dest": f"d{i:02d}", "bookings": bookings, "revenue": bookings * (100 + 10 * i)}
            )
    frame = pd.DataFrame(rows)
    report = run(tmp_path, frame, "revenue/bookings", date(2026, 3, 29), window="7d")
    mixes = [c for c in report.root_causes if c.kind == "mix_shift"]
    assert mixes and report.root_causes[0].kind == "mix_shift", report.root_causes
    # pandas: each destination's part (w1 - w0) * (rbar_i - Rbar) of the ratio's change
    cur, base = frame[frame["date"] > "2026-03-22"], frame[frame["date"].between("2026-03-16", "2026-03-22")]
    g1, g0 = (f.groupby("dest")[["revenue", "bookings"]].sum() for f in (cur, base))
    w1, w0 = g1["bookings"] / g1["bookings"].sum(), g0["bookings"] / g0["bookings"].sum()
    r1, r0 = g1["revenue"] / g1["bookings"], g0["revenue"] / g0["bookings"]
    big1, big0 = g1["revenue"].sum() / g1["bookings"].sum(), g0["revenue"].sum() / g0["bookings"].sum()
    part = (w1 - w0) * ((r0 + r1) / 2 - (big0 + big1) / 2) / (big1 - big0)
    for c in mixes:
        assert c.contribution == pytest.approx(part[c.segment["dest"]], abs=0.002)
        assert (
            c.contribution is not None and c.contribution < 0.5
        )  # one of four that moved alike: nowhere near all of it
    assert part.sum() == pytest.approx(1.0, abs=0.02)  # the parts add up to the (whole) mix


def test_a_relabel_is_named_with_both_values_and_neither_is_a_cause(tmp_path: Path) -> None:
    """Country "UK" is renamed "GB" upstream in the middle of the baseline week; the total
    is ordinary. The table would show UK falling and GB appearing: it is one segment."""
    rng = np.random.default_rng(19)
    rows = []
    for d in pd.date_range("2026-01-01", "2026-03-29", freq="D"):
        for country, level in (("UK", 500), ("DE", 800), ("FR", 600)):
            name = "GB" if country == "UK" and d >= pd.Timestamp("2026-03-20") else country
            rows.append({"date": d, "country": name, "revenue": level * (1 + rng.normal(0, 0.03))})
    report = run(tmp_path, pd.DataFrame(rows), "revenue", date(2026, 3, 29), window="7d")
    assert not any(c.segment.get("country") in ("UK", "GB") for c in report.root_causes), report.root_causes
    assert "country=UK became country=GB" in report.conclusion


def test_a_denominator_spike_in_one_segment_is_the_rate_change_the_check_accepts(tmp_path: Path) -> None:
    """Bot sessions: sessions x4 in region=us & source=ads with no more orders; conversion falls."""
    rng = np.random.default_rng(20)
    rows = []
    for d in pd.date_range("2026-01-01", "2026-03-29", freq="D"):
        for region in ("eu", "us", "apac", "latam"):
            for source in ("seo", "ads", "email", "direct"):
                s = 500 * (1 + rng.normal(0, 0.03))
                o = s * 0.04 * (1 + rng.normal(0, 0.03))
                s *= 4 if (region, source) == ("us", "ads") and d > pd.Timestamp("2026-03-22") else 1
                rows.append({"date": d, "region": region, "source": source, "sessions": s, "orders": o})
    report = run(tmp_path, pd.DataFrame(rows), "orders/sessions", date(2026, 3, 29), window="7d")
    first = report.root_causes[0]
    assert (first.kind, first.segment) == ("rate_change", {"region": "us", "source": "ads"}), (
        report.root_causes
    )
    assert first.verified and 0.8 <= (first.contribution or 0) <= 1.2


def test_the_largest_fall_in_decades_of_a_wild_series_is_not_normal_variation(tmp_path: Path) -> None:
    """A river's yearly flow swinging 15-20% a year for 60 years; the last year falls 45%, more
    than any year before. Its z against those swings is modest; it is still no ordinary year."""
    rng = np.random.default_rng(23)
    flow = 900 * np.exp(rng.normal(0, 0.15, 60))
    flow[-1] = flow[-2] * 0.55
    frame = pd.DataFrame({"year": np.arange(1901, 1961), "flow": flow})
    report = run(tmp_path, frame, "flow", date(1960, 12, 31), window="1y", time_column="year")
    assert report.movement.significant and kinds(report)[0] != "no_change", (
        report.movement,
        report.root_causes,
    )
    assert "largest fall" in report.conclusion or (report.movement.z or 0) <= -2


def test_saturday_dated_weeks_are_named_by_their_dates_ending_on_the_date_asked(tmp_path: Path) -> None:
    weeks = pd.date_range("2024-01-06", periods=60, freq="W-SAT")
    frame = pd.DataFrame({"week": weeks, "sales": 100 + np.random.default_rng(1).normal(0, 3, 60)})
    report = run(tmp_path, frame, "sales", date(2025, 2, 22), window="4w", time_column="week")
    assert (
        "in the weeks dated 2025-02-01..2025-02-22 vs the weeks dated 2025-01-04..2025-01-25"
        in report.conclusion
    )
