"""What `investigate mcp`'s tools do, as plain functions over the server's settings.

The MCP layer (`front/mcp_server.py`) only adapts these to the protocol: threads, progress,
cancellation and errors. Everything here is the product's own code, called as the CLI calls it
(`front.flags.ask`, `runner`, `triage.job`, `memory.api`), so a tool answers what the command
would. The runs folder and the memory home are the server's (`Place`): a client names a run by its
id, never a folder, and an id that would reach outside the runs folder is refused like an unknown
one.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from investigator.errors import UserError
from investigator.factories import Hooks
from investigator.front.live import Snapshot, snapshot
from investigator.limits import check_lengths
from investigator.memory.api import FactsView
from investigator.report.model import Report
from investigator.run.decision import Decision
from investigator.run.state import RunState
from investigator.triage.digest import Digest

if TYPE_CHECKING:
    from investigator.investigations import Runs

__all__ = [
    "Place",
    "RunList",
    "RunSummary",
    "TriageResult",
    "check_data",
    "check_lengths",
    "facts",
    "investigation",
    "list_runs",
    "load_report",
    "resumed",
    "run_folder",
    "triage",
]

_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
Progress = Callable[[Snapshot], None]


class Place(BaseModel):
    """Where the server keeps runs and memory, and what data a client may name: its own flags or
    environment, fixed at start."""

    runs_dir: Path
    home: Path
    data_roots: list[Path] | None = Field(
        None, description="files (data, triage configs) only from under these; None: anywhere"
    )
    urls: bool = Field(True, description="whether a client may write a connection URL itself")
    max_runs: int = Field(
        2, ge=1, description="investigations (and triage jobs) at once; as many more wait, beyond is refused"
    )
    semantic_manifest: Path | None = Field(None, description="the owner's dbt semantic manifest, if any")
    semantic_metrics: list[str] = Field(default_factory=list, description="the metrics it defines")


def semantic_catalogue(path: Path) -> list[str]:
    """The metrics a dbt semantic manifest defines (read with dbt-semantic-interfaces); a
    `UserError` in one line when it cannot be read or the library is missing."""
    from investigator.semantic import load_manifest

    return sorted(m.name for m in load_manifest(path).metrics)


def check_data(place: Place, data: str | None, what: str = "data file") -> None:
    """Refuse what this server does not let a client name: a file outside the data roots (an HTTP
    client is not the user who started the server, and a file's aggregates are its content), or a
    connection URL written by the client when only the server's own (`env:VAR`) are allowed. A
    `duckdb://` or `sqlite://` URL names a file: it is held to the data roots like a path."""
    from investigator.sources.readonly import database_path
    from investigator.sources.urls import ENV_PREFIX, is_url, scheme

    check_lengths({"config" if what == "triage config" else "data": data})
    if data is not None and data.startswith(ENV_PREFIX) and not place.urls:
        import os

        value = os.environ.get(data[len(ENV_PREFIX) :].strip(), "").strip()
        if not is_url(value) or value.startswith(ENV_PREFIX):  # unset, or no URL: one refusal for both
            raise UserError(
                f"data {data} names no connection this server holds: its operator sets the URL in the "
                "server's environment"
            )
    if data is None or data.startswith(ENV_PREFIX):
        return
    if is_url(data):
        if not place.urls:
            raise UserError(
                "this server takes no connection URL from a client: name one the server's environment "
                "holds, as data=env:VAR"
            )
        named = database_path(data) if scheme(data) in ("duckdb", "sqlite") else None
        if (
            named is None
            or place.data_roots is None
            or data.split("://", 1)[1].startswith(("md:", "motherduck:"))
        ):
            return
        path = named.resolve()
    elif place.data_roots is None:
        return
    else:
        path = Path(data).expanduser().resolve()
    if not any(path.is_relative_to(root) for root in place.data_roots):
        roots = ", ".join(str(r) for r in place.data_roots) or "none"
        raise UserError(f"{what} {data} is outside this server's data folders ({roots}); see --data-root")


class RunSummary(BaseModel):
    """One run in the runs folder, as `list_runs` shows it."""

    run_id: str
    created_at: datetime | None = None
    metric: str
    window: str
    data: str | None = Field(None, description="the data as the run stored it (a URL without password)")
    status: str = Field(description="concluded, partial, failed, or running (no report: still going or cut)")
    conclusion: str | None = None
    confidence: str | None = None


class RunList(BaseModel):
    runs: list[RunSummary] = Field(default_factory=list, description="newest first")
    more: int = Field(0, description="runs that matched beyond the limit")


class TriageResult(BaseModel):
    """A triage job's outcome: the digest, and the id of its folder (a resource) unless a dry run."""

    title: str
    exit_code: int = Field(description="0 ran; 3 some investigations or scans failed")
    digest_id: str | None = Field(None, description="read it as investigator://triage/{digest_id}/digest")
    digest: Digest


def run_folder(place: Place, run_id: str) -> Path:
    """The folder of run `run_id` inside the runs folder; a `UserError` for an id that is no run
    id (a path, `..`), so no client reaches another folder by naming one."""
    if not _RUN_ID.match(run_id) or ".." in run_id:
        shown = repr(run_id) if len(run_id) <= 64 else f"a {len(run_id):,}-character text"
        raise UserError(f"{shown} is not a run id (like 20260329-101500-a1b2c3); see list_runs")
    return place.runs_dir / run_id


def load_report(place: Place, run_id: str) -> Report:
    folder = run_folder(place, run_id)
    path = folder / "report.json"
    if path.is_file():
        return Report.model_validate_json(path.read_text())
    if (folder / "state.json").is_file():
        raise UserError(
            f"run {run_id} has no report yet: it is still running or was cut short; resume it with "
            f"resume(run_id={run_id!r})"
        )
    raise UserError(f"no run {run_id!r} in the runs folder; see list_runs")


def list_runs(place: Place, metric: str | None = None, status: str | None = None, limit: int = 20) -> RunList:
    """The runs folder's runs, newest first (ids start with their UTC time), optionally only one
    metric's or one status's. A folder that is no run (a triage digest, a stray) is skipped."""
    if not place.runs_dir.is_dir():
        return RunList()
    found: list[RunSummary] = []
    for folder in sorted(place.runs_dir.iterdir(), key=lambda p: p.name, reverse=True):
        if not _RUN_ID.match(folder.name) or folder.name.startswith("triage-"):
            continue
        summary = _summary(folder)
        if summary is None or (metric and summary.metric != metric) or (status and summary.status != status):
            continue
        found.append(summary)
    limit = max(limit, 0)
    return RunList(runs=found[:limit], more=max(len(found) - limit, 0))


def _summary(folder: Path) -> RunSummary | None:
    try:
        if (folder / "report.json").is_file():
            r = Report.model_validate_json((folder / "report.json").read_text())
            data = r.inputs.data if r.inputs is not None else None
            window = f"{r.window.start}..{r.window.end}"
            return RunSummary(
                run_id=r.run_id, metric=r.metric, window=window, data=data, status=r.status,
                conclusion=r.conclusion, confidence=r.confidence, created_at=_created(folder),
            )  # fmt: skip
        if (folder / "state.json").is_file():
            raw = json.loads((folder / "state.json").read_text())
            request = raw.get("request") or {}
            return RunSummary(
                run_id=folder.name, metric=str(request.get("metric", "?")), window=str(request.get("window")),
                data=request.get("data"), status="running", created_at=raw.get("created_at"),
            )  # fmt: skip
    except (OSError, ValueError):  # a half-written or foreign file: not a run to show
        return None
    return None


def _created(folder: Path) -> datetime | None:
    try:
        raw = json.loads((folder / "state.json").read_text())
        return datetime.fromisoformat(raw["created_at"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _hooks(progress: Progress, cancelled: threading.Event, most: int, warnings: list[str]) -> Hooks:
    """Progress after each iteration, and the client's cancellation: at the next iteration the run
    stops as Ctrl-C stops it (kernel shut down, checkpoint kept, resumable)."""
    import time

    started = time.monotonic()

    def update(state: RunState, decision: Decision | None) -> None:
        if cancelled.is_set():
            raise KeyboardInterrupt
        progress(snapshot(state, decision, most, started))

    return Hooks(progress=update, warn=warnings.append)


def investigation(
    place: Place, runs: Runs, progress: Progress, cancelled: threading.Event, **options: Any
) -> Report:
    """One investigation as the CLI runs it (`options` are the declared ones the MCP door takes),
    by `runs` (`runner.LocalRuns`: a kernel of its own, never one kept from another call)."""
    from investigator.front import question
    from investigator.front.flags import ask

    refused = sorted(set(options) - {o.name for o in question.OPTIONS if o.takes("mcp")})
    if refused:
        raise UserError(f"{refused[0]!r} is not an argument of investigate here")
    check_lengths({k: v for k, v in options.items() if isinstance(v, str | list)})
    check_data(place, options.get("data"))
    if place.semantic_manifest is not None and options.get("metric") in place.semantic_metrics:
        options = {**options, "semantic_manifest": place.semantic_manifest}  # the owner's, not the client's
    request, settings, choice = ask(
        door="mcp", runs_dir=place.runs_dir, home=place.home, by_owner=place.urls, **options
    )
    hooks = _hooks(progress, cancelled, settings.max_iterations, [])
    return runs.investigate(request, settings, hooks, llm=choice)


def resumed(
    place: Place, runs: Runs, progress: Progress, cancelled: threading.Event, run_id: str, more: int | None
) -> Report:
    """`investigate resume RUN_ID [--more N]`."""
    from investigator.config import load_settings

    run_folder(place, run_id)
    settings = load_settings(runs_dir=place.runs_dir, home=place.home)
    if more is not None and more < 1:
        raise UserError("more must be at least 1 (the steps to add)")
    if more:  # the run reopens with room for `more` steps after the ones it made (`continue_run`)
        done = json.loads((run_folder(place, run_id) / "state.json").read_text()).get("iteration", 0)
        hooks = _hooks(progress, cancelled, int(done) + more + 1, [])
        return runs.continue_run(run_id, settings, more, hooks)
    return runs.resume(run_id, settings, _hooks(progress, cancelled, settings.max_iterations, []))


def triage(place: Place, config: str, dry_run: bool) -> TriageResult:
    """`investigate triage --config CONFIG [--dry-run]`, its runs and state kept in the server's
    runs folder and home whatever the config says."""
    from investigator.triage.config import load_config
    from investigator.triage.job import run_triage

    check_data(place, config, "triage config")
    cfg = load_config(Path(config))
    cfg = cfg.model_copy(update={"runs_dir": place.runs_dir, "state": place.home / "triage.sqlite"})
    outcome = run_triage(cfg, dry_run=dry_run)
    digest_id = outcome.folder.name if outcome.folder is not None else None
    return TriageResult(
        title=outcome.title, exit_code=outcome.exit_code, digest_id=digest_id, digest=outcome.digest
    )


def digest_text(place: Place, digest_id: str) -> str:
    """A triage digest's JSON, by its folder's name (`triage-...`)."""
    if not digest_id.startswith("triage-"):
        raise UserError(f"{digest_id!r} is not a triage digest id (like triage-20260329T070000Z)")
    path = run_folder(place, digest_id) / "digest.json"
    if not path.is_file():
        raise UserError(f"no triage digest {digest_id!r} in the runs folder")
    return path.read_text()


def facts(place: Place) -> FactsView:
    """Approved facts and proposals waiting for a person (approving is theirs, not a tool's)."""
    from investigator.memory.api import list_facts

    return list_facts(place.home)
