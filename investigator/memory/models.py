"""What memory hands a run: approved facts and recalled past findings, and what a run proposes."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

FactKind = Literal["late_data", "note"]
MemoryType = Literal["fact", "decision", "preference", "observation"]
Direction = Literal["down", "up"]


def source_key(data: str, table: str | None = None, sql: str | None = None) -> str:
    """The data a run read, as memory keys it: a file by its absolute path, a URL by its place
    (no user, password or query), with the table or a hash of the query."""
    from pathlib import Path
    from urllib.parse import urlsplit

    if "://" in data and not data.startswith("file://"):
        try:
            parts = urlsplit(data)
            place = (
                f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path}"
            )
        except ValueError:
            place = data.split("://", 1)[0] + "://?"
    else:
        place = str(Path(data.removeprefix("file://")).expanduser().resolve())
    if sql:
        return f"{place}#sql:{hashlib.sha1(' '.join(sql.split()).encode()).hexdigest()[:10]}"
    return f"{place}#{table}" if table else place


def fact_id(kind: str, segment: dict[str, str], lag_days: int | None, metrics: list[str], text: str) -> str:
    """The same fact gets the same id wherever it comes from, so a proposal is made once."""
    key = json.dumps([kind, sorted(segment.items()), lag_days, sorted(metrics), text.strip().lower()])
    return "f-" + hashlib.sha1(key.encode()).hexdigest()[:6]


class ApprovedFact(BaseModel):
    """A fact a person approved; only these enter a prompt.

    `kind` and `segment` are the structured part the offline planner acts on (`late_data`: the
    segment's recent rows land `lag_days` late); `note` facts are context for people and models.
    Empty `metrics` means every metric."""

    id: str
    topic: str
    text: str
    kind: FactKind = "note"
    segment: dict[str, str] = Field(default_factory=dict)
    lag_days: int | None = None
    metrics: list[str] = Field(default_factory=list)
    run_id: str | None = Field(None, description="the run that proposed it, if one did")

    def applies_to(self, metric: str, dimensions: list[str]) -> bool:
        """About this metric (or every metric) and only about dimensions this data has."""
        return (not self.metrics or metric in self.metrics) and set(self.segment) <= set(dimensions)


class FactProposal(ApprovedFact):
    """A fact the agent proposed at conclusion; pending until a person approves or rejects it."""

    evidence: str = ""
    created: datetime | None = None
    mark: str | None = Field(
        None,
        description="the host's keyed digest of the proposal and its run id: kernel code cannot forge it",
    )


class Recalled(BaseModel):
    """A memory of a past run that entered this run's context."""

    run_id: str
    text: str
    score: float
    kind: str | None = Field(None, description="the cause kind, for a memory of one root cause")
    segment: dict[str, str] = Field(default_factory=dict)
    direction: Direction | None = Field(None, description="which way the metric moved there, if known")
    created: datetime | None = None


class Lead(BaseModel):
    """What a run found, as recall looks for it: a cause's kind, its segment and which way it
    moved. A past memory with the same is "the same drop"."""

    kind: str | None = None
    segment: dict[str, str] = Field(default_factory=dict)
    direction: Direction | None = None

    def matches(self, kind: str | None, segment: dict[str, str], direction: str | None) -> bool:
        """The same segment, and the same kind and direction where both are known."""
        return (
            segment == self.segment
            and (kind is None or self.kind is None or kind == self.kind)
            and (direction is None or self.direction is None or direction == self.direction)
        )


class MemoryContext(BaseModel):
    facts: list[ApprovedFact] = Field(default_factory=list)
    source: str | None = Field(None, description="the data the run read (`source_key`): its memories' home")
    source_alias: str | None = Field(None, description="metrics.yaml `source:`: sources named alike share")
    recalled: list[Recalled] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list, description="memory trouble; the run went on")


class NewMemory(BaseModel):
    """An atomic memory of a finished run, before it is embedded and stored."""

    type: MemoryType
    text: str
    run_id: str
    metric: str | None = None
    kind: str | None = None
    segment: dict[str, str] = Field(default_factory=dict)
    direction: Direction | None = Field(None, description="which way the metric moved there")
    source: str | None = Field(None, description="the data it is about: a file, a URL's place, a table")
    source_alias: str | None = None


class StoredMemory(NewMemory):
    id: int
    created: datetime
    last_access: datetime | None = None
    access_count: int = 0
    summary: bool = False
    score: float | None = None
