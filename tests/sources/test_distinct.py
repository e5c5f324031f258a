"""Distinct counts over whole windows, against pandas computed by hand: the window, the baseline,
the history's earlier windows, each segment and each leaf, on DuckDB, SQLite (through the extract
a warehouse run writes) and PostgreSQL; and averages as the ratios they are."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import ibis
import numpy as np
import pandas as pd
import pytest

from investigator.analysis.contributions import segment_table
from investigator.analysis.history import dimension_history
from investigator.analysis.movement import movement, window_value
from investigator.analysis.queries import daily_totals, grouped, open_table, period_cube, whole
from investigator.analysis.ratio import decompose_ratio, mix_rate
from investigator.analysis.spec import AnalysisSpec, Window
from investigator.errors import UserError
from investigator.request import parse_metric
from investigator.sources.extract import write_extract

WEEK = Window(start=date(2026, 3, 23), end=date(2026, 3, 29))
PREVIOUS = Window(start=date(2026, 3, 16), end=date(2026, 3, 22))
MARCH = Window(start=date(2026, 3, 1), end=date(2026, 3, 31))
FEBRUARY = Window(start=date(2026, 2, 1), end=date(2026, 2, 28))


def activity(seed: int = 3) -> pd.DataFrame:
    """Users active on some days, on one or both devices (a user in two segments), with revenue."""
    rng = np.random.default_rng(seed)
    n = 6000
    days = pd.date_range("2026-01-05", "2026-03-31").date
    frame = pd.DataFrame(
        {
            "date": rng.choice(days, n),
            "user_id": [f"u{i}" for i in rng.integers(0, 400, n)],
            "country": rng.choice(["DE", "FR", "US"], n),
            "device": rng.choice(["ios", "web"], n),
            "revenue": rng.gamma(2.0, 10.0, n).round(2),
        }
    )
    frame.loc[frame.index[:40], "revenue"] = None  # avg(revenue) is the mean of non-null values
    return frame


def spec_for(expression: str, current: Window, baseline: Window, **kw: object) -> AnalysisSpec:
    num, den = parse_metric(expression)
    return AnalysisSpec(
        metric=expression, numerator=num.name, denominator=den.name if den else None,
        computed={m.name: m for m in (num, den) if m is not None and m.kind != "sum"},
        dimensions=["country", "device"], current=current, baseline=baseline, **kw,
    )  # fmt: skip


def users(frame: pd.DataFrame, w: Window, **segment: str) -> int:
    """By hand: the distinct users in the window (and segment)."""
    part = frame[(frame["date"] >= w.start) & (frame["date"] <= w.end)]
    for k, v in segment.items():
        part = part[part[k] == v]
    return int(part["user_id"].nunique())


def user_days(frame: pd.DataFrame, w: Window) -> int:
    part = frame[(frame["date"] >= w.start) & (frame["date"] <= w.end)]
    return int(part.groupby("date")["user_id"].nunique().sum())


def sqlite_table(frame: pd.DataFrame, tmp_path: Path) -> ibis.Table:
    import sqlite3

    path = tmp_path / "a.sqlite"
    con = sqlite3.connect(path)
    frame.assign(date=frame["date"].astype(str)).to_sql("activity", con, index=False)
    con.close()
    return ibis.sqlite.connect(path).table("activity").mutate(date=ibis._["date"].cast("date"))


def extract_of(table: ibis.Table, spec: AnalysisSpec, tmp_path: Path) -> ibis.Table:
    """What a warehouse run's kernel reads: the extract the engine wrote."""
    path = tmp_path / "extract.parquet"
    write_extract(table, spec, path)
    return open_table(str(path), spec.time_column)


@pytest.fixture(params=["duckdb", "sqlite"])
def engine(request: pytest.FixtureRequest, tmp_path: Path):  # type: ignore[no-untyped-def]
    """The table as each engine's run reads it: DuckDB's raw rows, SQLite's extract."""

    def opened(frame: pd.DataFrame, spec: AnalysisSpec) -> ibis.Table:
        if request.param == "duckdb":
            return ibis.memtable(frame)
        return extract_of(sqlite_table(frame, tmp_path), spec, tmp_path)

    return opened


@pytest.mark.parametrize(("current", "baseline"), [(WEEK, PREVIOUS), (MARCH, FEBRUARY)], ids=["7d", "1mo"])
def test_a_distinct_count_counts_the_windows_users_once(engine, current: Window, baseline: Window) -> None:  # type: ignore[no-untyped-def]
    frame = activity()
    spec = spec_for("count_distinct(user_id)", current, baseline)
    table = engine(frame, spec)
    daily = daily_totals(table, spec)
    m = movement(daily, spec)
    assert m.current == users(frame, current) < user_days(frame, current)  # not user-days
    assert m.baseline == users(frame, baseline)
    cube = period_cube(table, spec)
    for country in ("DE", "FR", "US"):
        got = grouped(cube, spec, "country").loc[country]
        assert got["cur_distinct_user_id"] == users(frame, current, country=country)
        assert got["base_distinct_user_id"] == users(frame, baseline, country=country)
    leaf = cube[(cube["country"] == "DE") & (cube["device"] == "ios")].iloc[0]
    assert leaf["cur_distinct_user_id"] == users(frame, current, country="DE", device="ios")
    # a user on both devices is in both segments and once in the total
    ios, web = (users(frame, current, device=d) for d in ("ios", "web"))
    assert ios + web > m.current == whole(cube, spec)["cur_distinct_user_id"]
    assert grouped(cube, spec, "device").loc["ios", "cur_distinct_user_id"] == ios
    rows = {tuple(r.segment.items()): r for r in segment_table(cube, spec)}
    de = rows[(("country", "DE"),)]
    own = users(frame, current, country="DE") - users(frame, baseline, country="DE")
    assert de.change == own and de.share == pytest.approx(own / (m.current - m.baseline))


def test_every_earlier_window_of_the_history_is_counted_whole() -> None:
    frame = activity()
    spec = spec_for("count_distinct(user_id)", WEEK, PREVIOUS)
    daily = daily_totals(ibis.memtable(frame), spec)
    for back in (7, 14, 35):
        w = WEEK.shifted(back)
        assert window_value(daily, spec, w) == users(frame, w)
    history = dimension_history(ibis.memtable(frame), spec)
    assert history.windows is not None
    g = spec.window_grain
    w = WEEK.shifted(21)
    assert history.windows["device"].loc[g.index(w.end), "web"] == users(frame, w, device="web")


def test_an_avg_n_baseline_is_the_mean_of_its_windows_counts() -> None:
    frame = activity()
    four = Window(start=WEEK.start - timedelta(days=28), end=WEEK.start - timedelta(days=1))
    spec = spec_for("count_distinct(user_id)", WEEK, four)
    m = movement(daily_totals(ibis.memtable(frame), spec), spec)
    assert m.baseline == pytest.approx(np.mean([users(frame, WEEK.shifted(7 * k)) for k in (1, 2, 3, 4)]))


def test_user_days_stay_available_by_name(engine) -> None:  # type: ignore[no-untyped-def]
    frame = activity()
    spec = spec_for("count_distinct_daily(user_id)", WEEK, PREVIOUS)
    table = engine(frame, spec)
    m = movement(daily_totals(table, spec), spec)
    assert m.current == user_days(frame, WEEK) > users(frame, WEEK)
    web = frame[frame["device"] == "web"]
    cube = period_cube(table, spec)
    assert grouped(cube, spec, "device").loc["web", "cur_distinct_daily_user_id"] == user_days(web, WEEK)


def test_revenue_per_distinct_user_splits_into_mix_rate_and_overlap(engine) -> None:  # type: ignore[no-untyped-def]
    frame = activity()
    spec = spec_for("sum(revenue)/count_distinct(user_id)", WEEK, PREVIOUS)
    table = engine(frame, spec)
    cube = period_cube(table, spec)
    cur = frame[(frame["date"] >= WEEK.start) & (frame["date"] <= WEEK.end)]
    base = frame[(frame["date"] >= PREVIOUS.start) & (frame["date"] <= PREVIOUS.end)]
    r1, r0 = (
        cur["revenue"].sum() / cur["user_id"].nunique(),
        base["revenue"].sum() / base["user_id"].nunique(),
    )
    assert movement(daily_totals(table, spec), spec).current == pytest.approx(r1)
    split = mix_rate(cube, spec, "device")
    ios = split.set_index("device").loc["ios"]
    n1, d1 = (
        cur.loc[cur["device"] == "ios", "revenue"].sum(),
        cur.loc[cur["device"] == "ios", "user_id"].nunique(),
    )
    n0, d0 = (
        base.loc[base["device"] == "ios", "revenue"].sum(),
        base.loc[base["device"] == "ios", "user_id"].nunique(),
    )
    assert ios["current_rate"] == pytest.approx(n1 / d1) and ios["baseline_rate"] == pytest.approx(n0 / d0)
    assert ios["current_weight"] == pytest.approx(d1 / cur["user_id"].nunique())
    assert ios["rate"] == pytest.approx(
        (n1 / d1 - n0 / d0) * (d1 / cur["user_id"].nunique() + d0 / base["user_id"].nunique()) / 2
    )
    # users on both devices: the weights add up past 1, and mix + rate + overlap is the change
    assert split["current_weight"].sum() > 1.0
    assert split["effect"].sum() + split.attrs["overlap"] == pytest.approx(r1 - r0)
    d = decompose_ratio(cube, spec)
    device = next(s for s in d.dimensions if s.dimension == "device")
    assert device.mix + device.rate + device.overlap == pytest.approx(r1 - r0)


def test_avg_is_the_mean_of_non_null_values_with_mix_and_rate() -> None:
    frame = activity()
    spec = spec_for("avg(revenue)", WEEK, PREVIOUS)
    assert spec.denominator == "count_revenue"
    table = ibis.memtable(frame)
    m = movement(daily_totals(table, spec), spec)
    cur = frame[(frame["date"] >= WEEK.start) & (frame["date"] <= WEEK.end)]
    assert m.current == pytest.approx(cur["revenue"].mean())  # nulls left out, as pandas does
    assert m.current != pytest.approx(cur["revenue"].sum() / len(cur))
    split = mix_rate(period_cube(table, spec), spec, "country").set_index("country")
    de = cur[cur["country"] == "DE"]
    assert split.loc["DE", "current_rate"] == pytest.approx(de["revenue"].mean())
    assert split.loc["DE", "current_weight"] == pytest.approx(de["revenue"].count() / cur["revenue"].count())


@pytest.mark.parametrize(
    ("expression", "hint"),
    [("max(revenue)", "not a total of segments"), ("median(revenue)", "avg(revenue)"),
     ("mean(revenue)", "write avg(revenue)"), ("nunique(user_id)", "count_distinct(user_id)"),
     ("avg(revenue)/orders", "on its own")],
)  # fmt: skip
def test_an_unsupported_measure_says_why_and_what_works(expression: str, hint: str) -> None:
    with pytest.raises(UserError, match="not supported") as e:
        parse_metric(expression)
    assert hint in str(e.value) and "\n" not in str(e.value)


def test_approximate_distinct_uses_the_engines_estimate() -> None:
    frame = activity()
    spec = spec_for("approx_count_distinct(user_id)", WEEK, PREVIOUS)
    assert spec.approximate
    cube = period_cube(ibis.memtable(frame), spec)
    got = whole(cube, spec)["cur_approx_distinct_user_id"]
    assert got == pytest.approx(users(frame, WEEK), rel=0.05)


@pytest.mark.slow
def test_postgres_counts_the_windows_users_once(postgres, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from .conftest import CANARY, load_postgres

    frame = activity()
    load_postgres(postgres, "activity_distinct", frame)
    spec = spec_for("count_distinct(user_id)", WEEK, PREVIOUS)
    con = ibis.postgres.connect(host=postgres.host, port=postgres.port, user="analyst",
                                password=CANARY, database="shop")  # fmt: skip
    try:
        table = extract_of(con.table("activity_distinct"), spec, tmp_path)
    finally:
        con.disconnect()
    assert movement(daily_totals(table, spec), spec).current == users(frame, WEEK)
    cube = period_cube(table, spec)
    assert grouped(cube, spec, "device").loc["web", "cur_distinct_user_id"] == users(
        frame, WEEK, device="web"
    )


def test_a_segment_is_compared_with_the_rest_of_the_datas_own_users(engine) -> None:  # type: ignore[no-untyped-def]
    from investigator.analysis.queries import rest

    frame = activity()
    spec = spec_for("count_distinct(user_id)", WEEK, PREVIOUS)
    cube = period_cube(engine(frame, spec), spec)
    cur = frame[(frame["date"] >= WEEK.start) & (frame["date"] <= WEEK.end)]
    # the users of the rest of the data: on web, whether or not also on ios
    assert rest(cube, spec, "device").loc["ios", "cur_distinct_user_id"] == users(frame, WEEK, device="web")
    not_de = cur.loc[cur["country"] != "DE", "user_id"].nunique()
    assert rest(cube, spec, "country").loc["DE", "cur_distinct_user_id"] == not_de


def test_the_chart_shows_each_segments_own_change_and_the_overlap() -> None:
    from investigator.report.charts import _steps

    frame = activity()
    spec = spec_for("count_distinct(user_id)", WEEK, PREVIOUS)
    cube = period_cube(ibis.memtable(frame), spec)
    total = users(frame, WEEK) - users(frame, PREVIOUS)
    steps = {s.label: s.change for s in _steps(cube, spec, ["device"], total)}
    assert steps["ios"] == users(frame, WEEK, device="ios") - users(frame, PREVIOUS, device="ios")
    assert sum(steps.values()) == pytest.approx(total) and "in several segments" in steps


def test_an_approximate_count_says_so_in_the_metrics_name(tmp_path: Path) -> None:
    from investigator.config import MetricDefinition
    from investigator.request import build_request
    from investigator.sources.resolve import resolve

    path = tmp_path / "a.parquet"
    activity().to_parquet(path)
    definition = MetricDefinition(expression="approx_count_distinct(user_id)")
    request = build_request("wau", str(path), "7d", None, "previous", None, None, None)
    spec, _ = resolve(request, path, definition)
    assert spec.metric == "wau (approximate)"
    assert any("approximately (the engine's HyperLogLog estimate)" in n for n in spec.notes)
