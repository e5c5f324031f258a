"""The Python API: `investigate(df, metric="revenue", window="7d")` returns an `Investigation`.

An `Investigation` is the report (every field is an attribute) plus what a notebook wants of it: it
renders as HTML in Jupyter, exports to JSON, Markdown and a self-contained HTML file, and a run that
stopped at `max_iterations` can be resumed or given more iterations.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr

from investigator.config import Settings, load_settings
from investigator.errors import UserError
from investigator.front.question import notebook_parameters, with_options
from investigator.report.model import Report, to_markdown
from investigator.run.state import run_dir

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Investigation", "investigate"]


class Investigation(Report):
    """A finished or stopped run: the report's fields, its exports, and a way to go on."""

    _settings: Settings = PrivateAttr(default_factory=load_settings)
    _fragment: str | None = PrivateAttr(default=None)

    @classmethod
    def of(cls, report: Report, settings: Settings) -> Investigation:
        inv = cls.model_validate(report.model_dump())
        inv._settings = settings
        return inv

    @classmethod
    def load(cls, run_id: str, runs_dir: str | Path | None = None) -> Investigation:
        """Open a saved run from its folder (`runs/<run_id>/report.json`)."""
        settings = load_settings(runs_dir=runs_dir)
        path = run_dir(settings.runs_dir, run_id) / "report.json"
        if not path.exists():
            raise UserError(f"no report for run {run_id!r} under {settings.runs_dir}; runs are folders there")
        return cls.of(Report.model_validate_json(path.read_text()), settings)

    @property
    def folder(self) -> Path:
        """The run's folder: state, outputs, report.json/.md/.html and investigation.ipynb."""
        return run_dir(self._settings.runs_dir, self.run_id)

    @property
    def report(self) -> Report:
        return Report.model_validate(self.model_dump())

    # exports -------------------------------------------------------------------------------------
    def to_json(self, indent: int | None = 2) -> str:
        return self.report.model_dump_json(indent=indent)

    def to_markdown(self) -> str:
        return to_markdown(self)

    def to_html(self, path: str | Path | None = None) -> Path:
        """Write the report as one self-contained HTML file (charts embedded); default: the run
        folder's report.html. Returns the path."""
        from investigator.report import html as html_report

        target = Path(path) if path is not None else self.folder / html_report.REPORT_FILE
        return html_report.write(self._html(), self, target)

    def _html(self) -> str:
        if self._fragment is None:
            from investigator.report import html as html_report

            saved = html_report.saved_fragment(self.report, self.folder)
            self._fragment = saved or html_report.build(self.report, self.folder)
        return self._fragment

    def _repr_html_(self) -> str:
        return self._html()

    def __repr__(self) -> str:
        return f"<Investigation {self.run_id} {self.status} ({self.confidence}): {self.conclusion}>"

    __str__ = __repr__

    # going on ------------------------------------------------------------------------------------
    def resume(self, progress: bool = True) -> Investigation:
        """Finish a run that was interrupted, from its last completed iteration."""
        from investigator.front.live import progress as live
        from investigator.runner import resume

        with live(self._settings.max_iterations, enabled=progress) as hooks:
            return Investigation.of(resume(self.run_id, self._settings, hooks), self._settings)

    def continue_(self, iterations: int = 5, progress: bool = True) -> Investigation:
        """Give a finished or stopped run `iterations` more steps; it concludes again."""
        from investigator.front.live import progress as live
        from investigator.runner import continue_run

        with live(self.stats.iterations + iterations + 1, enabled=progress) as hooks:
            report = continue_run(self.run_id, self._settings, iterations, hooks)
        return Investigation.of(report, self._settings)


def investigate(
    data: pd.DataFrame | str | Path | None = None,
    metric: str | None = None,
    *,
    json_path: str | Path | None = None,
    quiet: bool = False,
    **options: Any,
) -> Investigation:
    """Investigate why `metric` moved in the last `window` against its baseline.

    `data` is a DataFrame, a CSV/Parquet path, a connection URL (or `env:VAR` naming one) with
    `table` or `sql`, or None for the metric's configured data (else the demo). `filter` keeps
    only some rows: a segment (`"region=EU"`, or `{"region": "EU"}`) or a boolean SQL expression
    over the columns (`"amount > 100 AND region IN ('EU', 'UK')"`). `semantic_manifest` (a dbt
    `semantic_manifest.json` or project folder) defines `metric`. The keyword arguments are
    the CLI's flags (`investigator.front.question.OPTIONS`); `quiet` turns the live progress off.
    The sandbox kernel is kept for the next call in this process and reset for it (an empty
    namespace): a second investigation skips the seconds a kernel takes to start.
    """
    from investigator.front.flags import ask
    from investigator.front.live import progress
    from investigator.runner import investigate as run

    frame = None if data is None or isinstance(data, str | Path) else data
    path = None if frame is not None or data is None else str(data)
    request, settings, choice = ask(metric=metric, data=path, door="notebook", by_owner=True, **options)
    with progress(settings.max_iterations, enabled=not quiet) as hooks:
        report = run(request, settings, hooks, data=frame, llm=choice, reuse_kernel=True)
    if json_path is not None:
        Path(json_path).parent.mkdir(parents=True, exist_ok=True)
        Path(json_path).write_text(report.model_dump_json(indent=2))
    return Investigation.of(report, settings)


with_options(investigate, notebook_parameters())
