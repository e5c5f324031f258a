from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from investigator.analysis.movement import historical_changes, movement, pct_change

from .helpers import daily, spec


def steady(n: int, seed: int = 0, level: float = 100.0, noise: float = 0.01) -> list[float]:
    rng = np.random.default_rng(seed)
    return list(level * (1 + rng.normal(0, noise, n)))


def test_change_and_pct_are_exact() -> None:
    values = [10.0] * 7 + [12.0] * 7
    m = movement(daily(values), spec())
    assert m.current == 84 and m.baseline == 70 and m.change == 14
    assert m.change_pct == pytest.approx(0.2)


def test_a_drop_far_outside_history_is_significant() -> None:
    values = steady(120)
    values[-7:] = [v * 0.8 for v in values[-7:]]
    m = movement(daily(values), spec())
    assert m.significant and m.z is not None and m.z < -5
    assert m.history_points >= 90


def test_noise_is_not_significant() -> None:
    m = movement(daily(steady(120, seed=4)), spec())
    assert not m.significant and abs(m.z or 0) < 3


def test_history_only_uses_windows_before_the_current_one() -> None:
    values = steady(60)
    values[-7:] = [1000.0] * 7  # a huge current window must not enter its own history
    hist = historical_changes(daily(values), spec())
    assert len(hist) > 30 and np.all(np.abs(hist) < 0.2)


def test_short_windows_compare_the_same_weekday() -> None:
    s = spec(days=1)
    # weekday pattern: Sundays (END is a Sunday) are 2x; day-over-day changes would look huge
    values = [200.0 if (i % 7) == 6 else 100.0 for i in range(70)]
    hist = historical_changes(daily(values), s.model_copy(update={"baseline": s.current.shifted(7)}))
    assert len(hist) == 8 and np.allclose(hist, 0.0)


def test_too_little_history_falls_back_to_a_plain_threshold() -> None:
    m = movement(daily([10.5] * 7 + [9.45] * 7), spec())
    assert m.z is None and m.history_points == 0 and m.significant  # -10% >= 5%
    assert not m.counts  # revenue in cents is no count of events


def test_a_count_that_moved_within_its_own_noise_did_not_move() -> None:
    """70 -> 63 events (-10%) is within a count's Poisson noise (2 sqrt(133) = 23): not significant,
    where the same -10% of a sum of amounts is; 1,400 -> 1,260 is outside it (2 sqrt(2660) = 103)."""
    small = movement(daily([10.0] * 7 + [9.0] * 7), spec())
    assert small.counts and not small.significant and small.z is None
    large = movement(daily([200.0] * 7 + [180.0] * 7), spec())
    assert large.counts and large.significant


def test_ratio_metric_and_zero_baseline() -> None:
    d = daily([1.0] * 14)
    d["orders"] = [0.0] * 7 + [2.0] * 7
    m = movement(d, spec(num="revenue", den="orders"))
    assert np.isnan(m.baseline) and m.change_pct is None
    assert pct_change(5.0, 0.0) is None and pct_change(-5.0, -10.0) == pytest.approx(0.5)


def test_negative_metric_is_measured_like_a_positive_one() -> None:
    """Regression: history used value/|base| - 1 while the current change used (v - b)/|b|, so a
    steady loss scored z in the hundreds."""
    rng = np.random.default_rng(3)
    values = list(-100 * (1 + rng.normal(0, 0.01, 120)))
    steady = movement(daily(values), spec())
    assert not steady.significant and abs(steady.z or 0) < 3
    values[-7:] = [v * 0.7 for v in values[-7:]]  # the loss shrinks by 30%: up 30%
    better = movement(daily(values), spec())
    assert better.significant and better.change_pct == pytest.approx(0.3, abs=0.02)


def test_a_one_day_shock_in_a_short_file_is_judged_against_the_days_around_it() -> None:
    """Five weeks of days that vary by about 10%; the last day halves. Four earlier Sundays are too
    few, the 30-odd days around it are not: far outside normal variation."""
    import numpy as np

    from investigator.analysis.movement import movement

    from .helpers import daily, spec

    rng = np.random.default_rng(4)
    values = list(1000 * (1 + rng.normal(0, 0.05, 35)))  # days within about 10% of each other
    values[-1] = values[-2] * 0.5
    m = movement(daily(values), spec(days=1))
    assert not m.short_history and m.z is not None and m.z < -3 and m.strong and m.significant


@pytest.mark.parametrize("dtype", ["float64", "Float64", "int64"])
def test_a_windows_value_is_pandas_masked_sum_nulls_and_empty_windows_included(dtype: str) -> None:
    """`window_value` reads earlier windows hundreds of times a run with numpy: it must give what
    pandas' `.loc[mask].sum(min_count=1)` gives, a window of nulls or of no rows NaN, never 0."""
    from datetime import timedelta

    from investigator.analysis.movement import window_value
    from investigator.analysis.spec import Window

    from .helpers import END

    rng = np.random.default_rng(7)
    days = [END - timedelta(days=i) for i in range(60)][::-1]
    values = rng.integers(-50, 500, size=60).astype(float)
    if dtype != "int64":
        values[[3, 10, 11, 12, 13, 14, 15, 16, 40]] = np.nan  # days 10..16: a whole week of nulls
    frame = pd.DataFrame(
        {
            "date": days,
            "revenue": pd.array(values, dtype=dtype) if dtype != "int64" else values.astype("int64"),
        }
    )
    s = spec()
    windows = [Window(start=days[i], end=days[i + 6]) for i in range(0, 54, 3)]
    windows.append(Window(start=END + timedelta(days=1), end=END + timedelta(days=7)))  # past the data
    for w in windows:
        mask = (frame["date"] >= w.start) & (frame["date"] <= w.end)
        total = frame.loc[mask, "revenue"].sum(min_count=1)
        expected = float("nan") if pd.isna(total) else float(total)  # nullable floats give NA
        got = window_value(frame, s, w)
        assert (np.isnan(got) and np.isnan(expected)) or got == expected, (w, got, expected)
    whole_nulls = Window(start=days[10], end=days[16])
    assert np.isnan(window_value(frame, s, whole_nulls)) == (dtype != "int64")
