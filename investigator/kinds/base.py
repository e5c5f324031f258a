"""What every kind of cause is made of, so that one module can hold all of one kind.

A `Kind` is a value: its hypotheses (statement, the kernel code that tests each and why), how it
reads a typed result into a finding and hypothesis updates, its cause rule, its words, and how a
claimed cause of the kind is re-checked on the host. The list of kinds, in precedence order, is
`investigator.kinds.KINDS`; everything that needs "the kinds" reads that list.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar, cast

import pandas as pd

from investigator.analysis.causes import CauseKind, RootCause
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.table import Table
from investigator.run.evidence import AnalysisResult, Evidence
from investigator.run.hypotheses import HypothesisKind, Update


class Case(NamedTuple):
    """What a cause rule sees: the evidence, the question, and the causes kinds of higher
    precedence already accepted, each with its kind's name (a data problem that explains the move
    leaves nothing to a segment)."""

    evidence: Evidence
    spec: AnalysisSpec
    accepted: tuple[tuple[str, RootCause], ...] = ()
    notable: bool = False  # a kind says the move is news whatever its size (a record, a reversal)

    @property
    def causes(self) -> list[RootCause]:
        return [c for _, c in self.accepted]

    def of(self, kind: str) -> list[RootCause]:
        """The causes one kind accepted."""
        return [c for k, c in self.accepted if k == kind]


class Reading(NamedTuple):
    """A kind's reading of one result: a sentence for the finding (None: it has nothing to say)
    and the hypothesis updates it implies."""

    text: str | None
    updates: list[Update]


class CheckData(NamedTuple):
    """What the host recomputes a claimed cause from: the engine's aggregates of the run's data,
    and what checks computed of them once per run (`prepared`)."""

    table: Table
    daily: pd.DataFrame
    cube: pd.DataFrame
    spec: AnalysisSpec
    tolerance: float
    cache: dict[str, object]


T = TypeVar("T")


def prepared(d: CheckData, key: str, make: Callable[[CheckData], T]) -> T:
    """What a check needs that no claim changes (the driver split, every quality check), computed
    once per run: by the first check that asks, or ahead of the conclusion in the checker's
    background thread (a kind's `ahead`; then its `Future` is here). A computation that failed
    there is run again here, so the error the check raises is this thread's own."""
    got = d.cache.get(key)
    if isinstance(got, Future):
        try:
            d.cache[key] = got.result()
        except Exception:
            del d.cache[key]
    if key not in d.cache:
        d.cache[key] = make(d)
    return cast(T, d.cache[key])


class Checked(NamedTuple):
    """The host's check of one claim: the problem (None: verified) and the share it measured."""

    problem: str | None
    measured: float | None = None


@dataclass(frozen=True)
class Test:
    """How the offline planner tests one hypothesis: whether its evidence is in, the kernel code
    that produces it, and why it is worth a step."""

    tested: Callable[[Evidence], bool]
    code: str
    why: str


def _none(case: Case) -> list[RootCause]:
    return []


def _silent(result: AnalysisResult) -> Reading | None:
    return None


def _unowned(cause: RootCause, spec: AnalysisSpec) -> bool:
    return False


@dataclass(frozen=True)
class Kind:
    """One kind of cause. Every part but `name` has a default, so a kind that has no hypothesis
    (offsetting moves) or no result of its own to read says nothing about it."""

    name: str
    causes: tuple[CauseKind, ...] = ()  # the kinds of cause it names, in the causes' vocabulary
    hypotheses: Callable[[AnalysisSpec], list[tuple[HypothesisKind, str]]] = lambda spec: []
    tests: dict[HypothesisKind, Test] = field(default_factory=dict)
    read: Callable[[AnalysisResult], Reading | None] = _silent
    decide: Callable[[Case], list[RootCause]] = _none
    owns: Callable[[RootCause, AnalysisSpec], bool] = _unowned
    confirms: dict[CauseKind, HypothesisKind] = field(default_factory=dict)
    words: Callable[[RootCause, Evidence], str] = lambda c, e: c.kind
    check: Callable[[CheckData, RootCause], Checked] = lambda d, c: Checked(f"{c.kind} cannot be checked")
    needs_dimensions: bool = False
    notable: Callable[[Evidence], bool] = lambda e: False  # the move is news: the breakdown explains it
    note: Callable[[Evidence], str] = lambda e: ""  # a sentence the headline adds
    says_share: bool = False  # its words give the cause's share of the change: the verdict adds none
    late: tuple[CauseKind, ...] = ()  # its causes whose fall can be rows that land late (a fact says)
    # what its check needs of the data whatever the claim (`prepared`), computed by the host in the
    # background ahead of the conclusion, from the step `ahead_when` says (given the evidence so
    # far and the code the kernel is about to run; by default, when the kernel runs its test)
    ahead: dict[str, Callable[[CheckData], object]] = field(default_factory=dict)
    ahead_when: Callable[[Evidence, str], bool] | None = None

    def starts_ahead(self, evidence: Evidence, code: str) -> bool:
        """Whether the host should start computing `ahead` now: the conclusion may claim the kind."""
        if not self.ahead:
            return False
        if self.ahead_when is not None:
            return self.ahead_when(evidence, code)
        return any(test.code == code for test in self.tests.values())
