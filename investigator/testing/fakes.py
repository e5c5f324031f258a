"""Fakes for the seams that tests use instead of the real thing: a `DataSource` over a DataFrame in
memory, an `Embedder` with no model, and a `Notifier` that delivers nothing. Each records what it
was asked and can be told to fail the way its real counterpart fails."""

from __future__ import annotations

import hashlib
import re
import threading
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from ibis.expr.types import Table

    from investigator.config import Settings
    from investigator.factories import Hooks, LLMChoice
    from investigator.report.model import Report
    from investigator.request import Request

__all__ = ["FakeEmbedder", "FakeNotifier", "FakeRuns", "FrameSource"]


class FrameSource:
    """A `DataSource` over a DataFrame, read by DuckDB through Ibis; `fail` is raised by every
    `open` instead (a `DataError` is what a real source raises). `opened` holds the name of each
    thread that opened it, `closed` how many times it was closed."""

    def __init__(self, frame: pd.DataFrame | None = None, fail: Exception | None = None) -> None:
        self.frame, self.fail = frame, fail
        self.notes: list[str] = []
        self.opened: list[str] = []
        self.closed = 0

    def describe(self) -> str:
        return "a DataFrame in memory"

    def open(self, time_column: str) -> Table:
        self.opened.append(threading.current_thread().name)
        if self.fail is not None:
            raise self.fail
        if self.frame is None:
            raise ValueError("FrameSource was given no frame and no failure")
        import ibis

        table = ibis.memtable(self.frame)
        return table.mutate(**{time_column: table[time_column].cast("date")})

    def close(self) -> None:
        self.closed += 1


_WORD = re.compile(r"\w+")


class FakeEmbedder:
    """An `Embedder` with no model: each word hashed to one of `dim` axes, so texts sharing words
    are near and others are not. `non_finite` puts a NaN in the last row, as a remote endpoint
    might. `asked` holds every batch of texts."""

    def __init__(self, dim: int = 256, non_finite: bool = False, name: str = "fake-hash") -> None:
        self.dim, self.non_finite, self.name = dim, non_finite, name
        self.asked: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.asked.append(list(texts))
        rows = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in _WORD.findall(text.lower()):
                rows[i, int(hashlib.blake2b(word.encode(), digest_size=4).hexdigest(), 16) % self.dim] += 1
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit = (rows / np.where(norms == 0, 1, norms)).astype(np.float32)
        if self.non_finite and len(texts):
            unit[-1, 0] = np.nan
        return unit


class FakeNotifier:
    """A `Notifier` that delivers nothing and keeps every message in `sent` (url, title, body).
    Each call answers the next of `replies` (None: delivered; a string: why not), then None;
    `fail`, when set, is raised by every call instead."""

    def __init__(self, replies: list[str | None] | None = None, fail: Exception | None = None) -> None:
        self.replies, self.fail = list(replies or []), fail
        self.sent: list[tuple[str, str, str]] = []

    def send(self, url: str, title: str, body: str) -> str | None:
        self.sent.append((url, title, body))
        if self.fail is not None:
            raise self.fail
        return self.replies.pop(0) if self.replies else None


class FakeRuns:
    """A `Runs` that starts no run: each call answers a concluded `Report` for the metric asked (run
    id `fake-<metric>`, or the run id resumed), or raises `fail`. `asked` holds each call as (verb,
    metric or run id, iterations for continue_run else None); when `meet` is given, each call waits
    at it first (a `threading.Barrier` that breaks unless that many calls run at once)."""

    def __init__(self, fail: Exception | None = None, meet: threading.Barrier | None = None) -> None:
        self.fail, self.meet = fail, meet
        self.asked: list[tuple[str, str, int | None]] = []

    def investigate(
        self, request: Request, settings: Settings, hooks: Hooks | None = None, llm: LLMChoice | None = None
    ) -> Report:
        return self._answer("investigate", request.metric, None, f"fake-{request.metric}")

    def resume(self, run_id: str, settings: Settings, hooks: Hooks | None = None) -> Report:
        return self._answer("resume", run_id, None, run_id)

    def continue_run(
        self, run_id: str, settings: Settings, iterations: int, hooks: Hooks | None = None
    ) -> Report:
        return self._answer("continue_run", run_id, iterations, run_id)

    def _answer(self, verb: str, what: str, iterations: int | None, run_id: str) -> Report:
        from datetime import date

        from investigator.report.model import BaselinePeriod, MovementSummary, Period, Report, Stats

        self.asked.append((verb, what, iterations))
        if self.meet is not None:
            self.meet.wait()
        if self.fail is not None:
            raise self.fail
        day = date(2026, 3, 1)
        return Report(
            run_id=run_id, status="concluded", metric=what if verb == "investigate" else "?",
            window=Period(start=day, end=day), baseline=BaselinePeriod(start=day, end=day, kind="previous"),
            movement=MovementSummary(current=90.0, baseline=100.0, change=-10.0, change_pct=-10.0),
            conclusion=f"fake: {verb} {what}", confidence="high", root_causes=[], hypotheses=[],
            findings=[], stats=Stats(iterations=1, elapsed_s=0.0, planner="fake"),
        )  # fmt: skip
