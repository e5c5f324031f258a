"""A season: the comparable earlier windows moved alike, so the move is the calendar's.

The rule (`evidenced`): repetition over at least three earlier years, or an earlier move that
stood far outside ordinary windows; a match by chance in a noisy series is no season.

It comes after data problems (a season does not explain rows that are missing) and before every
business kind: a season that moved everything alike leaves nothing to a segment or a broad move.
"""

from __future__ import annotations

import statistics

from investigator.analysis.causes import RootCause
from investigator.analysis.movement import Movement
from investigator.analysis.seasonality import Seasonality, seasonality
from investigator.analysis.spec import AnalysisSpec
from investigator.fmt import pct
from investigator.kinds import data_quality
from investigator.kinds.base import Case, CheckData, Checked, Kind, Reading, Test
from investigator.kinds.common import share_of
from investigator.run.evidence import AnalysisResult
from investigator.run.hypotheses import HypothesisKind, Status, Update

MATERIAL = 0.05  # a usual seasonal move this size is the answer even within normal variation
MIN_YEARS = 3  # earlier years that moved alike: repetition is the evidence for an ordinary-sized move
TIGHT = 0.5  # ... and alike closely: their moves within half the spread of ordinary windows
STAND_OUT = 2.5  # with fewer years: the earlier move itself far outside how ordinary windows move


def evidenced(season: Seasonality, move: Movement | None) -> bool:
    """A season is an answer only with evidence that the calendar, not chance, made the move: at
    least `MIN_YEARS` earlier years moved alike in the same window and stand out from how ordinary
    windows move: so closely (their spread within `TIGHT` of ordinary windows' spread: gas use fell
    50-52% from Q1 to Q2 every year while its quarters swing from -50% to +100%), or so far (their
    usual move `STAND_OUT` spreads from the norm: every November -12% in a flat series); or, with
    fewer years, the earlier move itself stood far outside ordinary windows (a holiday's dip a
    year ago). A noisy series whose same week happened to fall in two of two earlier years is not
    seasonal, nor one whose same window moved alike in three years by as much as any window moves."""
    if not season.seasonal:
        return False
    in_percent = move is not None and not move.in_points and not move.counts  # the comparisons' units
    spread = move.history_spread_pct if move is not None and in_percent else None
    norm = (move.history_median_pct or 0.0) if move is not None else 0.0
    alike = _alike_years(season)
    if len(alike) >= MIN_YEARS:
        if spread is None:
            return True
        tight = (max(alike) - min(alike)) / 2 <= TIGHT * spread
        return tight or abs(statistics.median(alike) - norm) >= STAND_OUT * spread
    earlier = season.best_change_pct
    return spread is not None and earlier is not None and abs(earlier - norm) >= STAND_OUT * spread


def _alike_years(season: Seasonality) -> list[float]:
    """The changes of the earlier years' same windows that moved the current change's way, one per
    year (daily data compares 364 and 365 days back: one year, two alignments)."""
    now = season.change_pct or 0.0
    by_year: dict[int, float] = {}
    for c in season.comparisons:
        if c.change_pct is not None and c.lag_days >= 300 and c.change_pct * now > 0:
            by_year.setdefault(round(c.lag_days / 365.25), c.change_pct)
    return list(by_year.values())


def words(season: Seasonality) -> str:
    """What the earlier windows did, as evidence: "moved alike in 3 of 4 earlier years (...)"."""
    lag = season.best_lag or f"{season.best_lag_days} days"
    if season.years >= 2:
        changes = [c.change_pct for c in season.comparisons if c.change_pct is not None]
        return (
            f"the same windows moved alike in {season.alike} of {season.years} earlier years "
            f"({pct(min(changes))} to {pct(max(changes))}; now {pct(season.change_pct)})"
        )
    return (
        f"{lag} earlier the same windows moved {pct(season.best_change_pct)} (now {pct(season.change_pct)})"
    )


def _hypotheses(spec: AnalysisSpec) -> list[tuple[HypothesisKind, str]]:
    return [("seasonality", f"The movement is seasonal: {_compared(spec)} moved alike.")]


def _compared(spec: AnalysisSpec) -> str:
    """What the seasonality check compares, so the table says what was tested."""
    if spec.window_grain.unit == "day":
        short = spec.current.days < 7 and spec.baseline_offset != 7
        return "the same days a week and a year earlier" if short else "the same days a year earlier"
    return "the same periods in earlier years"


def _read(p: AnalysisResult) -> Reading | None:
    if not isinstance(p, Seasonality):
        return None
    if p.available and p.best_lag_days is None:
        why = "no earlier comparable period has a measurable change (a zero baseline)"
        return Reading(
            f"Seasonality cannot be tested: {why}.",
            [Update(kind="seasonality", status=Status.NOT_TESTABLE, evidence=f"not testable: {why}")],
        )
    if not p.available:
        why = getattr(p, "reason", None) or "the history does not reach the comparable period a year back"
        return Reading(
            f"Seasonality cannot be tested: {why}.",
            [Update(kind="seasonality", status=Status.NOT_TESTABLE, evidence=f"not testable: {why}")],
        )
    text = (
        f"Compared with the same windows {p.best_lag or f'{p.best_lag_days} days'} earlier: "
        f"then {pct(p.best_change_pct)}, now {pct(p.change_pct)}."
    )
    if p.seasonal:
        return Reading(
            text + " The same movement happened before: it is seasonal.",
            [Update(kind="seasonality", status=Status.CONFIRMED, evidence=text)],
        )
    return Reading(
        text + " Not a repeat of an earlier period.",
        [Update(kind="seasonality", status=Status.RULED_OUT, evidence=text)],
    )


def _decide(case: Case) -> list[RootCause]:
    """A season is the answer when the move is material (outside normal variation, or at least
    `MATERIAL` of the total) and no data problem explains it."""
    season, move = case.evidence.seasonality, case.evidence.movement
    if season is None or not evidenced(season, move) or data_quality.explains_all(case):
        return []
    material = case.evidence.significant or (move is not None and abs(move.change_pct or 0) >= MATERIAL)
    if not material:
        return []
    part = min(1.0, (season.best_change_pct or 0) / (season.change_pct or 1))
    return [RootCause(kind="seasonality", contribution=share_of(part), evidence=words(season))]


def _check(d: CheckData, c: RootCause) -> Checked:
    s = seasonality(d.daily, d.spec)
    return Checked(None if s.seasonal else "the comparable earlier period did not move alike")


def seasonal(case: Case) -> bool:
    """A season was accepted: it moved everything alike."""
    return bool(case.of(KIND.name))


KIND = Kind(
    name="seasonality",
    causes=("seasonality",),
    hypotheses=_hypotheses,
    tests={
        "seasonality": Test(
            lambda e: e.seasonality is not None,
            "season = seasonality(daily, spec)\nemit(season)",
            "Check whether the same movement happened in the comparable period before.",
        )
    },
    read=_read,
    decide=_decide,
    owns=lambda c, spec: c.kind == "seasonality",
    confirms={"seasonality": "seasonality"},
    words=lambda c, e: f"seasonality ({c.evidence})" if c.evidence else "seasonality",
    check=_check,
)
