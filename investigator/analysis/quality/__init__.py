"""Data-quality checks: is the movement an artefact of the data rather than the business?

Each issue carries its estimated effect on the change, so the caller can tell a data problem that
explains the movement from one that is merely present. Every check works in the data's periods
(days, weeks, months, years): a monthly series has missing months, never missing days.

One module per kind of problem: copied rows (`duplicates`), rows not there (`missing`), labels
that changed under the data (`labels`), measure values that are not numbers (`values`);
`checks` runs them all and estimates each issue's share of the change.
"""

from __future__ import annotations

from .checks import quality_checks
from .duplicates import ALL_CHECKED, COPIES, DUP_FLOOR, duplicate_suspects, find_duplicates
from .issues import QualityIssue, QualityReport
from .labels import find_null_dimensions, find_relabelled
from .missing import HELD, find_incomplete_recent, find_missing
from .periods import LOOKBACK, expected_periods, lookback_start
from .values import find_bad_values, find_new_coverage

__all__ = [
    "ALL_CHECKED",
    "COPIES",
    "DUP_FLOOR",
    "HELD",
    "LOOKBACK",
    "QualityIssue",
    "QualityReport",
    "duplicate_suspects",
    "expected_periods",
    "find_bad_values",
    "find_duplicates",
    "find_incomplete_recent",
    "find_missing",
    "find_new_coverage",
    "find_null_dimensions",
    "find_relabelled",
    "lookback_start",
    "quality_checks",
]
