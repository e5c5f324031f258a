from __future__ import annotations

from datetime import timedelta

from investigator.analysis.seasonality import seasonality

from .helpers import END, daily, spec


def series(days: int, dips: list[tuple[int, int]], factor: float = 0.7, factors: list[float] | None = None):  # type: ignore[no-untyped-def]
    """A flat series with the given day ranges (days before END) scaled."""
    factors = factors or [factor] * len(dips)
    values = {}
    for i in range(days):
        d = END - timedelta(days=days - 1 - i)
        hit = [f for (a, b), f in zip(dips, factors, strict=True) if a <= (END - d).days <= b]
        values[d] = 100.0 * (hit[0] if hit else 1.0)
    return daily(values)


def test_same_dip_a_year_earlier_is_seasonal() -> None:
    s = seasonality(series(400, [(0, 6), (364, 370)]), spec())
    assert s.seasonal and s.available
    assert s.best_lag_days == 364 and s.best_change_pct is not None and abs(s.best_change_pct + 0.3) < 1e-9


def test_calendar_aligned_dip_uses_365_days() -> None:
    s = seasonality(series(400, [(0, 6), (365, 371)]), spec())
    assert s.seasonal and s.best_lag_days == 365


def test_no_dip_last_year_is_not_seasonal() -> None:
    s = seasonality(series(400, [(0, 6)]), spec())
    assert not s.seasonal and s.best_change_pct == 0.0


def test_opposite_or_much_smaller_move_last_year_is_not_seasonal() -> None:
    assert not seasonality(series(400, [(0, 6), (364, 370)], factors=[0.7, 1.3]), spec()).seasonal
    assert not seasonality(series(400, [(0, 6), (364, 370)], factors=[0.7, 0.95]), spec()).seasonal
    assert seasonality(series(400, [(0, 6), (364, 370)], factors=[0.7, 0.75]), spec()).seasonal


def test_short_history_is_not_available() -> None:
    s = seasonality(series(120, [(0, 6)]), spec())
    assert not s.available and not s.seasonal
