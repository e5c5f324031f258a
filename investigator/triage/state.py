"""What earlier triage runs did, in SQLite, so an anomaly is investigated and notified once; and the
lock that keeps two runs off the same state.

An anomaly is (metric, segment, the window end its episode opened on): the same move seen again
the next mornings (`triage.episodes`), or by a re-run of the same morning's job, is the same
anomaly. Each source's last day is kept too (`triage.freshness`): a load that did not arrive.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

from pydantic import BaseModel

from investigator.errors import InvestigatorError
from investigator.triage.episodes import Episode
from investigator.triage.freshness import Load

_SCHEMA = """
create table if not exists anomalies (
    metric text not null,
    segment text not null,
    window_end text not null,
    first_seen text not null,
    run_id text,
    status text,
    summary text,
    notified_at text,
    primary key (metric, segment, window_end)
);
create table if not exists episodes (
    metric text not null,
    segment text not null,
    first_end text not null,
    body text not null,
    open integer not null,
    primary key (metric, segment, first_end)
);
create table if not exists loads (
    source text primary key,
    body text not null
)
"""


class TriageLocked(InvestigatorError):
    """Another triage run holds the state's lock (exit 1: the job could not run)."""


class Seen(BaseModel):
    """An anomaly as an earlier run left it."""

    run_id: str | None = None
    status: str | None = None
    summary: str | None = None
    notified_at: str | None = None


def anomaly_key(metric: str, segment: dict[str, str], window_end: date) -> tuple[str, str, str]:
    return metric, json.dumps(segment, sort_keys=True), window_end.isoformat()


class TriageState:
    """The SQLite file of anomalies already handled. Used from one thread (the job's)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(path)
        self.db.executescript(_SCHEMA)
        self.db.commit()

    def close(self) -> None:
        self.db.close()

    def seen(self, key: tuple[str, str, str]) -> Seen | None:
        row = self.db.execute(
            "select run_id, status, summary, notified_at from anomalies "
            "where metric = ? and segment = ? and window_end = ?",
            key,
        ).fetchone()
        if row is None:
            return None
        return Seen(run_id=row[0], status=row[1], summary=row[2], notified_at=row[3])

    def record(self, key: tuple[str, str, str], run_id: str | None, status: str, summary: str) -> None:
        """An investigation's outcome (the summary is what a later notification says of it)."""
        self.db.execute(
            "insert into anomalies (metric, segment, window_end, first_seen, run_id, status, summary) "
            "values (?, ?, ?, ?, ?, ?, ?) on conflict (metric, segment, window_end) do update set "
            "run_id = excluded.run_id, status = excluded.status, summary = excluded.summary",
            (*key, _now(), run_id, status, summary),
        )
        self.db.commit()

    def note(self, keys: list[tuple[str, str, str]]) -> None:
        """Anomalies a message announced without a finding (deferred): remembered as seen, so the
        next run does not announce them again, and not as notified, so it sends their finding."""
        now = _now()
        self.db.executemany(
            "insert into anomalies (metric, segment, window_end, first_seen) values (?, ?, ?, ?) "
            "on conflict (metric, segment, window_end) do nothing",
            [(*k, now) for k in keys],
        )
        self.db.commit()

    def mark_notified(self, keys: list[tuple[str, str, str]]) -> None:
        now = _now()
        self.db.executemany(
            "insert into anomalies (metric, segment, window_end, first_seen, notified_at) "
            "values (?, ?, ?, ?, ?) on conflict (metric, segment, window_end) do update set "
            "notified_at = excluded.notified_at",
            [(*k, now, now) for k in keys],
        )
        self.db.commit()

    def open_episodes(self) -> list[Episode]:
        rows = self.db.execute("select body from episodes where open = 1").fetchall()
        return [Episode.model_validate_json(r[0]) for r in rows]

    def save_episodes(self, episodes: list[Episode]) -> None:
        self.db.executemany(
            "insert into episodes (metric, segment, first_end, body, open) values (?, ?, ?, ?, ?) "
            "on conflict (metric, segment, first_end) do update set "
            "body = excluded.body, open = excluded.open",
            [(*e.series, e.first_end.isoformat(), e.model_dump_json(), int(e.open)) for e in episodes],
        )
        self.db.commit()

    def load(self, source: str) -> Load | None:
        row = self.db.execute("select body from loads where source = ?", (source,)).fetchone()
        return None if row is None else Load.model_validate_json(row[0])

    def save_load(self, load: Load) -> None:
        self.db.execute(
            "insert into loads (source, body) values (?, ?) "
            "on conflict (source) do update set body = excluded.body",
            (load.source, load.model_dump_json()),
        )
        self.db.commit()


@contextlib.contextmanager
def state_lock(state_path: Path) -> Iterator[Path]:
    """Hold `<state>.lock` for the run; a second run on the same state fails at once (flock is
    released by the kernel if this process dies, so a crash never leaves a stale lock)."""
    lock = state_path.with_name(state_path.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TriageLocked(
                f"another triage run is using {state_path} (lock {lock}); this run did nothing: "
                "let that one finish, or give this job its own `state:`"
            ) from None
        try:
            yield lock
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
