"""What every run leaves for people beside its report: `report.html` and `investigation.ipynb`.

Writing them never fails a run: the report is already on disk, so a problem here is a warning.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from investigator.report.model import Report
from investigator.run.state import load


def write_artifacts(report: Report, folder: Path, verify_tolerance: float = 0.25) -> None:
    """Write the run's HTML report and trail notebook; warn (never raise) if either fails."""
    from investigator.report import html as html_report
    from investigator.report import trail

    def page() -> Path:
        return html_report.write(html_report.build(report, folder), report, folder / html_report.REPORT_FILE)

    def notebook() -> Path:
        return trail.write(load(folder), folder, verify_tolerance)

    _quietly(page, folder / html_report.REPORT_FILE)
    _quietly(notebook, folder / trail.TRAIL_FILE)


def _quietly(make: Callable[[], Any], path: Path) -> None:
    try:
        make()
    except Exception as e:  # an artifact is a convenience: the run and its report stand without it
        warnings.warn(f"could not write {path}: {type(e).__name__}: {e}", RuntimeWarning, stacklevel=3)
