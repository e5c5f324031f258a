"""The report: the contract other tools and tests read (JSON), plus Markdown and a terminal view."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from investigator.analysis.causes import RootCause
from investigator.analysis.contributions import SegmentChange
from investigator.analysis.drivers import DriverSplit
from investigator.files import write_atomic
from investigator.fmt import md, num, pct, seg
from investigator.memory.models import ApprovedFact, Recalled
from investigator.report.recalled import previously_found
from investigator.report.tables import (
    DRIVER_COLUMNS,
    SEGMENT_COLUMNS,
    cause_share,
    driver_rows,
    segment_cells,
    signed,
)
from investigator.run.evidence import input_notes
from investigator.run.state import RunState
from investigator.run.tokens import TokenMeter


class Period(BaseModel):
    start: date
    end: date


class BaselinePeriod(Period):
    kind: str = Field(description="previous, wow, mom, qoq, yoy, avgN or the range the user wrote")
    scale: float = Field(
        1.0,
        description="what the baseline's sums are multiplied by to compare with the window: 1 for equal "
        "lengths, 1/N for avgN (the mean of N windows), else the window's length over the baseline's",
    )


class MovementSummary(BaseModel):
    current: float | None = None
    baseline: float | None = None
    change: float | None = None
    change_pct: float | None = None
    significant: bool | None = None
    z: float | None = Field(None, description="robust score of the change against earlier windows")


class Inputs(BaseModel):
    """What produced the report, so a reader (or a scheduler) can tell two reports apart."""

    data: str | None = Field(None, description="the source as given, never with a password")
    table: str | None = None
    sql: str | None = None
    filter: str | None = Field(None, description="the rows the run kept (--filter), as the user wrote it")
    time_column: str
    grain: str = Field(description="the data's period, e.g. 'day', 'month', '5 years'")
    dimensions: list[str]
    window: str
    baseline: str


class HypothesisRow(BaseModel):
    id: str
    statement: str
    status: str
    evidence: str


class FindingRow(BaseModel):
    iteration: int
    decision: str
    summary: str


class Phases(BaseModel):
    """Where one invocation's wall time went, in seconds; they add up to `Stats.elapsed_s`."""

    start_s: float = Field(
        0.0,
        description="the program's own start (from the command line: its imports), then checking the "
        "request while the sandbox and kernel start",
    )
    data_s: float = Field(0.0, description="loading the data in the kernel (on resume, replaying steps)")
    loop_s: float = Field(0.0, description="the iterations and the report")
    artifacts_s: float = Field(0.0, description="HTML report, trail notebook, kernel stop, memory")


class ModelSteps(BaseModel):
    """What the model did, for the LLM planner: the steps its answer decided (`reasked` of them
    after at least one re-ask) and the steps left to the offline planner because it could not give
    a valid answer (invalid after the re-asks, cut off at the token cap, stalled)."""

    decided: int = Field(0, description="steps the model's answer decided")
    reasked: int = Field(0, description="of those, steps that needed at least one re-ask")
    fell_back: int = Field(0, description="steps the offline planner decided because the model could not")

    @property
    def steps(self) -> int:
        return self.decided + self.fell_back

    @property
    def mostly_fell_back(self) -> bool:
        return self.fell_back * 2 > self.steps

    def summary(self) -> str:
        return (
            f"the model decided {self.decided} of {self.steps} steps ({self.reasked} after a re-ask), "
            f"{self.fell_back} fell back to the offline planner"
        )

    def warning(self) -> str | None:
        if not self.mostly_fell_back:
            return None
        return (
            f"warning: {self.fell_back} of {self.steps} steps fell back to the offline planner: this model "
            "could not follow the format: try a larger model or --planner offline"
        )


def model_steps(state: RunState) -> ModelSteps | None:
    """The count over the run's decisions; None when no model decided or failed a step."""
    by = [d for d in state.decisions if d.answered_by is not None]
    if not by:
        return None
    decided = [d for d in by if d.answered_by == "model"]
    return ModelSteps(
        decided=len(decided), reasked=sum(d.reasks > 0 for d in decided), fell_back=len(by) - len(decided)
    )


class Stats(BaseModel):
    iterations: int
    elapsed_s: float = Field(description="wall time of this invocation, kernel start and artifacts included")
    planner: str
    tokens: TokenMeter = Field(default_factory=TokenMeter)
    phases: Phases = Field(default_factory=Phases)
    earlier_s: float = Field(0.0, description="time spent by earlier invocations of a resumed run")
    model: ModelSteps | None = Field(
        None, description="LLM planner: the steps the model decided, re-asked, and left to the fallback"
    )

    def timed(self, **phases: float) -> Stats:
        """These stats with some phases set; the total is their sum again."""
        new = self.phases.model_copy(update={k: round(v, 3) for k, v in phases.items()})
        total = new.start_s + new.data_s + new.loop_s + new.artifacts_s
        return self.model_copy(update={"phases": new, "elapsed_s": round(total, 3)})

    def summary(self) -> str:
        """The one line the terminal ends with: the total, then where it went."""
        p = self.phases
        line = (
            f"{self.iterations} iterations in {self.elapsed_s:.1f}s (start {p.start_s:.1f}, data "
            f"{p.data_s:.1f}, loop {p.loop_s:.1f}, artifacts {p.artifacts_s:.1f})"
        )
        return line + (f", {self.earlier_s:.1f}s before resuming" if self.earlier_s else "")


SCHEMA_VERSION = "1.0"  # bump the major number when a field changes meaning or goes away


class Report(BaseModel):
    """The report of one run: what `--json` writes and `report.json` holds. Its JSON Schema ships in
    the package (`investigator/report/report.schema.json`)."""

    schema_version: str = SCHEMA_VERSION
    run_id: str
    status: str
    metric: str
    window: Period
    baseline: BaselinePeriod
    movement: MovementSummary
    conclusion: str
    confidence: str
    root_causes: list[RootCause]
    hypotheses: list[HypothesisRow]
    findings: list[FindingRow]
    stats: Stats
    stop_reason: str | None = None
    blockers: list[str] = Field(default_factory=list)
    segments: list[SegmentChange] = Field(
        default_factory=list, description="the segments that moved most, one dimension at a time"
    )
    drivers: DriverSplit | None = Field(
        None, description="the metric's change split over its driver tree (a metric with `drivers:`)"
    )
    notes: list[str] = Field(default_factory=list, description="how to read the numbers")
    recalled: list[Recalled] = Field(
        default_factory=list, description="memories of past runs that entered the context"
    )
    facts: list[ApprovedFact] = Field(
        default_factory=list, description="approved facts that entered the context"
    )
    inputs: Inputs | None = Field(None, description="the request and data that produced this report")


def build_report(
    state: RunState,
    segments: list[SegmentChange] | None = None,
    phases: Phases | None = None,
    earlier_s: float = 0.0,
) -> Report:
    """The report of a run; `phases` time this invocation (default: all of the run's loop time),
    `earlier_s` is what invocations before a resume took."""
    move = state.evidence.movement
    c = state.conclusion
    notes = []
    if c is not None and any(abs(x.contribution or 0) > 1 for x in c.root_causes):
        notes.append(
            "Shares are of the net change"
            + (f" ({num(move.change)})" if move is not None else "")
            + ": a share past 100% means other segments moved the other way and offset part of it."
        )
    if c is not None and any(x.basis == "gross" for x in c.root_causes):
        notes.append(
            "A share marked (gross) is of the movement either way: the net change was small beside the "
            "moves inside it, so the cause is sized against its own change plus the rest's, the other way."
        )
    notes += input_notes(state.spec, state.evidence)  # columns left out, units and zones, bad values
    notes += seen_before(state)
    notes += state.memory.warnings
    return Report(
        run_id=state.run_id,
        status=state.status,
        metric=state.spec.metric,
        window=Period(start=state.spec.current.start, end=state.spec.current.end),
        baseline=BaselinePeriod(
            start=state.spec.baseline.start,
            end=state.spec.baseline.end,
            kind=state.spec.baseline_kind,
            scale=state.spec.baseline_scale,
        ),
        movement=MovementSummary.model_validate(move.model_dump(include=set(MovementSummary.model_fields)))
        if move is not None
        else MovementSummary(),
        conclusion=c.conclusion or "" if c else "",
        confidence=(c.confidence or "low") if c else "low",
        root_causes=c.root_causes if c else [],
        hypotheses=[
            HypothesisRow(id=h.id, statement=h.statement, status=h.status, evidence=h.evidence)
            for h in state.hypotheses
        ],
        findings=[
            FindingRow(iteration=f.iteration, decision=f.decision, summary=f.summary) for f in state.findings
        ],
        stats=Stats(
            iterations=state.iteration,
            elapsed_s=round(state.elapsed_s, 3),
            planner=state.planner,
            tokens=state.tokens,
            earlier_s=round(earlier_s, 3),
            model=model_steps(state),
        ).timed(**(phases or Phases(loop_s=state.elapsed_s)).model_dump()),
        stop_reason=state.stop_reason,
        blockers=state.blockers,
        segments=segments or [],
        drivers=state.evidence.drivers,
        notes=notes,
        recalled=state.memory.recalled,
        facts=state.memory.facts,
        inputs=inputs_of(state),
    )


def inputs_of(state: RunState) -> Inputs:
    r, s = state.request, state.spec
    grain = s.grain if s.grain_step == 1 else f"{s.grain_step} {s.grain}s"
    return Inputs(
        data=r.data, table=r.table, sql=r.sql, filter=r.filter, time_column=s.time_column, grain=grain,
        dimensions=s.dimensions, window=str(r.window), baseline=s.baseline_kind,
    )  # fmt: skip


def json_schema() -> dict[str, Any]:
    """The report's JSON Schema, as published in the package."""
    return Report.model_json_schema(mode="serialization")


def seen_before(state: RunState) -> list[str]:
    """Recalled causes checked against this run's verified ones: the same cause found again is
    said, and one this data does not show is said too (a memory is never a conclusion)."""
    causes = state.conclusion.root_causes if state.conclusion is not None else []
    move = state.evidence.movement.change if state.evidence.movement is not None else 0.0
    found = [  # kind, segment and which way it moved (the cause's change, else the metric's)
        (c.kind, c.segment, "down" if (c.change or move) < 0 else "up" if (c.change or move) > 0 else None)
        for c in causes
        if c.verified is not False
    ]
    notes = []
    for r in state.memory.recalled:
        if r.kind is None or r.kind == "no_change":
            continue
        when = f" on {r.created:%Y-%m-%d}" if r.created else ""
        where = seg(r.segment) if r.segment else "the whole metric"
        what = r.kind + {"down": ", a drop", "up": ", a rise"}.get(r.direction or "", "")
        if any(
            f[:2] == (r.kind, r.segment) and (None in (f[2], r.direction) or f[2] == r.direction)
            for f in found
        ):
            notes.append(f"Seen before: run {r.run_id}{when} also found {what} in {where}.")
        else:
            notes.append(f"Recalled from run {r.run_id}{when}: {what} in {where}; not found in this data.")
    return notes


def to_markdown(r: Report) -> str:
    lines = [
        f"# Why did {_md(r.metric)} move? ({r.window.start} to {r.window.end})",
        "",
        f"**{_md(r.conclusion)}**",
        "",
        f"Confidence: **{r.confidence}**. "
        f"Baseline: {r.baseline.kind} ({r.baseline.start} to {r.baseline.end}"
        f"{'' if r.baseline.scale == 1 else f', its sums scaled by {r.baseline.scale:.4g}'}). "
        f"Movement: {num(r.movement.baseline)} -> {num(r.movement.current)} ({pct(r.movement.change_pct)}), "
        f"{'significant' if r.movement.significant else 'not significant'}.",
        "",
        "## Root causes",
        "",
        "| # | kind | segment | share of change | change | evidence |",
        "|---|---|---|---|---|---|",
    ]
    for i, c in enumerate(r.root_causes, 1):
        share = cause_share(c)
        kind = c.kind + (f" ({_md(c.detail or c.driver or '')})" if c.detail or c.driver else "")
        lines.append(
            f"| {i} | {kind} | {_md(seg(c.segment))} | {share} | {signed(c.change)} | {_md(c.evidence)} |"
        )
    lines += [f"\n_{_md(n)}_" for n in r.notes]
    if r.facts:
        lines += ["", "## Approved facts used", ""]
        lines += [f"- `{f.id}` {_md(f.text)}" for f in r.facts]
    if r.recalled:
        lines += ["", "## Previously found (recalled, tested against this data)", ""]
        lines += [
            f"- {_md(a.text)} ({a.when()}; relevance {a.score:.2f})" for a in previously_found(r.recalled)
        ]
    segments = [segment_cells(row) for row in r.segments]
    tables = [("Driver tree", DRIVER_COLUMNS, driver_rows(r.drivers)),
              ("Segments that moved most", SEGMENT_COLUMNS, segments)]  # fmt: skip
    for title, columns, rows in (t for t in tables if t[2]):
        lines += ["", f"## {title}", "", "| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
        lines += ["| " + " | ".join(_md(cell) for cell in row) + " |" for row in rows]
    lines += ["", "## Hypotheses", "", "| id | status | statement | evidence |", "|---|---|---|---|"]
    lines += [f"| {h.id} | {h.status} | {_md(h.statement)} | {_md(h.evidence)} |" for h in r.hypotheses]
    lines += ["", "## Findings", ""]
    lines += [f"{f.iteration}. **{f.decision}** {_md(f.summary)}" for f in r.findings]
    s = r.stats
    lines += [
        "",
        f"_{s.summary()}, planner {s.planner}{planner_steps(s)}, run {r.run_id}._",
        "",
    ]
    return "\n".join(lines)


TERMINAL_SEGMENTS = 5


def planner_steps(s: Stats) -> str:
    """`: the model decided 5 of 7 steps (...)` after the planner's name, for the LLM planner."""
    return f": {s.model.summary()}" if s.model is not None else ""


def _md(text: str) -> str:
    """Text from the data or a model inside Markdown: HTML shown, never rendered; one line."""
    return md(text).replace("\n", " ")


def write_report(report: Report, folder: Path, json_path: Path | None = None) -> None:
    """report.json and report.md, each replaced whole: the runner rewrites them once the artifacts'
    time is known, and a reader never sees half a file."""
    folder.mkdir(parents=True, exist_ok=True)
    text = report.model_dump_json(indent=2)
    write_atomic(folder / "report.json", text)
    write_atomic(folder / "report.md", to_markdown(report))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(text)


def render_terminal(report: Report, console: Any, quiet: bool = False) -> None:
    """A readable summary with rich; `quiet` prints the conclusion alone. Everything from the data
    (segments, column names, evidence) is printed as text, never as rich markup."""
    from rich.panel import Panel
    from rich.table import Table

    from investigator.terminal import cells, text

    if quiet:  # one unwrapped line, for scripts and pipes
        print(report.conclusion)
        return
    console.print(
        Panel(
            text(report.conclusion),
            title=text(f"{report.metric}: why did it move?"),
            subtitle=text(f"confidence {report.confidence}"),
        )
    )
    causes = Table(title="Root causes", show_lines=False)
    for col in ("#", "kind", "segment", "share", "change", "evidence"):
        causes.add_column(col, overflow="fold")
    for i, c in enumerate(report.root_causes, 1):
        share = cause_share(c)
        kind = c.kind + (f" ({c.detail or c.driver})" if c.detail or c.driver else "")
        causes.add_row(*cells(i, kind, seg(c.segment), share, signed(c.change), c.evidence))
    console.print(causes)
    for note in report.notes:
        console.print(text(note, style="italic"))
    segments = [segment_cells(row) for row in report.segments[:TERMINAL_SEGMENTS]]
    for title, columns, rows in (("Driver tree", DRIVER_COLUMNS, driver_rows(report.drivers)),
                                 ("Segments that moved most", SEGMENT_COLUMNS, segments)):  # fmt: skip
        if rows:
            table = Table(title=title)
            for col in columns:
                table.add_column(col, overflow="fold")
            for row in rows:
                table.add_row(*cells(*row))
            console.print(table)
    if report.recalled:
        recalled = Table(title="Previously found (recalled)")
        for col in ("memory", "found by", "relevance"):
            recalled.add_column(col, overflow="fold")
        for a in previously_found(report.recalled):
            recalled.add_row(*cells(a.text, a.when(), f"{a.score:.2f}"))
        console.print(recalled)
    for f in report.facts:
        console.print(text(f"approved fact {f.id}: {f.text}", style="dim"))
    hyps = Table(title="Hypotheses")
    for col in ("id", "status", "statement"):
        hyps.add_column(col, overflow="fold")
    for h in report.hypotheses:
        hyps.add_row(*cells(h.id, h.status, h.statement))
    console.print(hyps)
    s = report.stats
    console.print(text(f"{s.summary()} with the {s.planner} planner{planner_steps(s)}; run {report.run_id}"))
    if s.model is not None and (warning := s.model.warning()) is not None:
        console.print(text(warning, style="bold yellow"))
