"""What every run leaves for people beside its report: `report.html` and `investigation.ipynb`.

Writing them never fails a run: the report is already on disk, so a problem here is a warning,
and the files that could not be written are returned (the command line exits non-zero for them).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

from investigator.report.model import Report
from investigator.run.checks import Aggregates
from investigator.run.state import load


def write_artifacts(
    report: Report,
    folder: Path,
    verify_tolerance: float = 0.25,
    computed: Aggregates | None = None,
    warn: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write the run's HTML report and trail notebook; warn (never raise) if either fails, through
    `warn` (default: a `RuntimeWarning`), and return those that failed. A failed file is removed:
    an earlier version beside a newer report.json would tell another story.
    `computed`: the run's aggregates of its data, so the charts need not query it again."""
    from investigator.report import html as html_report
    from investigator.report import trail

    def page() -> Path:
        body = html_report.build(report, folder, computed)
        return html_report.write(body, report, folder / html_report.REPORT_FILE)

    def notebook() -> Path:
        return trail.write(load(folder), folder, verify_tolerance)

    failed = []
    for make, path in ((page, folder / html_report.REPORT_FILE), (notebook, folder / trail.TRAIL_FILE)):
        if not _quietly(make, path, warn):
            failed.append(path)
    return failed


LOG_FILE = "artifacts.log"


def _quietly(make: Callable[[], Any], path: Path, warn: Callable[[str], None] | None) -> bool:
    """Make one artifact. Library warnings while drawing (a glyph missing from the font for a CJK
    label, say) go to the run's `artifacts.log`, not the terminal; a failure is one warning."""
    with warnings.catch_warnings(record=True) as caught:
        try:
            make()
            failed = None
        except Exception as e:  # an artifact is a convenience: the run and its report stand without it
            why = e.strerror if isinstance(e, OSError) and e.strerror else f"{type(e).__name__}: {e}"
            failed = f"could not write {path}: {why}"
    if caught:
        lines = "".join(f"{path.name}: {w.category.__name__}: {w.message}\n" for w in caught)
        with contextlib.suppress(OSError), open(path.parent / LOG_FILE, "a", encoding="utf-8") as log:
            log.write(lines)
    if failed is None:
        return True
    with contextlib.suppress(OSError):  # an earlier run's version, now stale
        path.unlink()
    if warn is not None:
        warn(failed)
    else:
        warnings.warn(failed, RuntimeWarning, stacklevel=3)
    return False
