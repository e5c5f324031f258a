"""Creating a run (the request checked against the data, its first checkpoint) and loading a saved one.

A file is read where it is; a connection URL is validated in its engine, which writes the run's
aggregated extract into the run folder. A DataFrame is written there first.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd

from investigator.analysis.spec import AnalysisSpec
from investigator.config import MetricDefinition, Settings
from investigator.errors import ConfigError, DataError
from investigator.factories import sandbox_backend
from investigator.fmt import clip
from investigator.kinds import seed_hypotheses
from investigator.memory import load_recall_model, recall
from investigator.memory.models import source_key
from investigator.request import Request, metric_definition
from investigator.run.guard import check_unchanged, fingerprint
from investigator.run.state import RunState, load, new_run_id, run_dir, save
from investigator.sources.extract import EXTRACT_FILE, write_extract
from investigator.sources.resolve import request_source, resolve
from investigator.sources.urls import is_url, redact

DATAFRAME_FILE = "data.parquet"  # where a DataFrame given to a run is kept, inside the run folder


def new_run(
    request: Request,
    data_path: str | Path,
    settings: Settings,
    planner: str,
    run_id: str | None = None,
    definition: MetricDefinition | None = None,
) -> RunState:
    """Validate the request against the data and save the run's first checkpoint.

    A file is read where it is. A connection URL is validated in its engine, which then writes the
    run's aggregated extract (`sources.extract`) into the run folder: that file is the run's data
    from here on (kernel, cause check, resume), and the run keeps the URL without its password.
    """
    definition = definition or metric_definition(request.metric, request.semantic_manifest)
    run_id = run_id or new_run_id()
    data = str(data_path)
    if is_url(data):
        spec, data_file = _extract(request, data, definition, run_dir(settings.runs_dir, run_id))
        stored = redact(data)
    else:
        load_recall_model(settings)  # while the file is checked
        spec, _ = resolve(request, data_path, definition)
        stored, data_file = data, str(Path(data_path).resolve())
    state = RunState(
        fingerprint=fingerprint(data_file),
        memory=recall(settings, spec, source=_source(request, stored, definition), alias=definition.source),
        run_id=run_id,
        created_at=datetime.now(UTC),
        request=request.model_copy(update={"data": stored}),
        spec=spec,
        data_path=data_file,
        planner=planner,
        sandbox=sandbox_backend(settings),
        settings=settings.run_settings(),
        hypotheses=seed_hypotheses(spec),
    )
    save(state, run_dir(settings.runs_dir, state.run_id))
    return state


def _source(request: Request, stored: str, definition: MetricDefinition) -> str:
    """The data this run reads, as memory keys it (no credentials)."""
    return source_key(stored, request.table or definition.table, request.sql or definition.sql)


def _extract(
    request: Request, url: str, definition: MetricDefinition, folder: Path
) -> tuple[AnalysisSpec, str]:
    """Validate in the engine and write the extract. On a failure the caller removes the run folder
    (`drop_unsaved`), after stopping the kernel it may be starting in it: removed here, under a
    kernel still starting, the kernel's own error reached the user's terminal beside theirs."""
    source = request_source(url, request, definition)
    try:
        spec, table = resolve(request, source, definition)
        extract = write_extract(table, spec, folder / EXTRACT_FILE)
    finally:
        close = getattr(source, "close", None)
        if close is not None:
            close()
    return spec, extract.path


def one_name_each(frame: pd.DataFrame) -> None:
    """A DataFrame with two columns of one name cannot be a table (every engine, and the run's
    Parquet copy, needs one column per name): say which, before anything is written."""
    twice = list(dict.fromkeys(str(c) for c in frame.columns[frame.columns.duplicated()]))
    if twice:
        names = clip(", ".join(repr(n) for n in twice), 120)
        raise DataError(
            f"the DataFrame has more than one column named {names}: rename them, or keep one of each "
            "with df.loc[:, ~df.columns.duplicated()]"
        )


def load_run(run_id: str, settings: Settings) -> tuple[RunState, Settings]:
    """A saved run and the settings it started with (the caller's `runs_dir` still applies)."""
    folder = run_dir(settings.runs_dir, run_id)
    if not (folder / "state.json").exists():
        if folder.is_dir():  # killed while it started (SIGKILL, a crash): nothing to continue from
            raise ConfigError(
                f"run {run_id} was stopped while it started and saved nothing to continue from (its folder "
                f"holds no state.json): run the same investigate command again, and remove {folder}"
            )
        raise ConfigError(f"no run {run_id!r} under {settings.runs_dir}; runs are folders there")
    state = load(folder)
    saved = {**state.settings.model_dump(), "planner": state.planner, "sandbox": state.sandbox}
    return state, settings.model_copy(update=saved)


def forget_kernel_state(folder: Path) -> None:
    """Remove the DataFrames an earlier kernel pickled into the workspace, so a resumed run's
    kernel does not load them: unpickling runs code, and a kernel (or whoever had the run folder)
    wrote those files. The resumed run goes on from state.json's evidence instead."""
    from sandbox.sessions import STATE_DIR

    saved = folder / "workspace" / STATE_DIR
    if saved.is_symlink() or saved.is_file():
        saved.unlink()
    elif saved.is_dir():
        shutil.rmtree(saved, ignore_errors=True)  # never follows a link inside


def same_data(state: RunState, settings: Settings, force: bool) -> RunState:
    """The run's input as it started, or (forced) the run over again from its request on the data
    as it is now: never a movement from one file beside causes from another."""
    if not force:
        check_unchanged(state.fingerprint, state.data_path, state.run_id)
        return state
    request = state.request.model_copy(update={"data": state.data_path})
    return new_run(request, state.data_path, settings, state.planner, state.run_id)
