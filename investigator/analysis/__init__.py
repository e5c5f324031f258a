"""Statistics every investigation can call. Plain functions over Ibis tables and DataFrames.

Imports nothing from the agent, so a kernel can preload it: `from investigator.analysis import *`.
"""

from .contributions import contributions, top_contributions
from .emit import MIME, emit
from .localize import Element, localize, localize_ratio
from .movement import Movement, movement
from .quality import QualityIssue, QualityReport, quality_checks
from .queries import daily_by_dimension, daily_totals, open_table, period_cube
from .ratio import RatioDecomposition, decompose_ratio, mix_rate
from .seasonality import Seasonality, seasonality
from .segments import (
    BroadBased,
    DrillDown,
    SegmentExplanation,
    broad_based,
    drill_down,
    explain_segments,
    localize_cube,
)
from .spec import AnalysisSpec, Window
from .verify import Verification, verify_causes

__all__ = [
    "MIME",
    "AnalysisSpec",
    "BroadBased",
    "DrillDown",
    "Element",
    "Movement",
    "QualityIssue",
    "QualityReport",
    "RatioDecomposition",
    "Seasonality",
    "SegmentExplanation",
    "Verification",
    "Window",
    "broad_based",
    "contributions",
    "daily_by_dimension",
    "daily_totals",
    "decompose_ratio",
    "drill_down",
    "emit",
    "explain_segments",
    "localize",
    "localize_cube",
    "localize_ratio",
    "mix_rate",
    "movement",
    "open_table",
    "period_cube",
    "quality_checks",
    "seasonality",
    "top_contributions",
    "verify_causes",
]
