"""Statistics every investigation can call. Plain functions over Ibis tables and DataFrames.

Imports nothing from the agent, so a kernel can preload it: `from investigator.analysis import *`.
Names load on first use, so importing one small module of the package (the `MIME` constant, the
spec) does not pull in Ibis and SciPy. Several functions share their module's name (`movement`,
`emit`, ...): the package never lets a submodule hide the function of the same name.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .causes import CauseKind, QualityDetail, RootCause
    from .contributions import SegmentChange, contributions, segment_table, top_contributions
    from .drill import DrillDown, drill_down
    from .drivers import DriverSplit, driver_split
    from .emit import MIME, emit
    from .grain import Grain, detect_grain
    from .history import DimensionHistory, dimension_history
    from .localize import Element, localize, localize_ratio
    from .movement import Movement, movement
    from .quality import QualityIssue, QualityReport, quality_checks
    from .queries import daily_by_dimension, daily_totals, period_cube
    from .ratio import RatioDecomposition, decompose_ratio, mix_rate
    from .reading import open_table
    from .seasonality import Seasonality, seasonality
    from .segments import (
        BroadBased,
        SegmentExplanation,
        broad_based,
        explain_segments,
        localize_cube,
    )
    from .spec import AnalysisSpec, Window
    from .verify import Verification

_EXPORTS = {
    "Grain": "grain",
    "detect_grain": "grain",
    "DimensionHistory": "history",
    "DriverSplit": "drivers",
    "driver_split": "drivers",
    "dimension_history": "history",
    "SegmentChange": "contributions",
    "segment_table": "contributions",
    "CauseKind": "causes",
    "QualityDetail": "causes",
    "RootCause": "causes",
    "contributions": "contributions",
    "top_contributions": "contributions",
    "MIME": "emit",
    "emit": "emit",
    "Element": "localize",
    "localize": "localize",
    "localize_ratio": "localize",
    "Movement": "movement",
    "movement": "movement",
    "QualityIssue": "quality",
    "QualityReport": "quality",
    "quality_checks": "quality",
    "daily_by_dimension": "queries",
    "daily_totals": "queries",
    "open_table": "reading",
    "period_cube": "queries",
    "RatioDecomposition": "ratio",
    "decompose_ratio": "ratio",
    "mix_rate": "ratio",
    "Seasonality": "seasonality",
    "seasonality": "seasonality",
    "BroadBased": "segments",
    "DrillDown": "drill",
    "SegmentExplanation": "segments",
    "broad_based": "segments",
    "drill_down": "drill",
    "explain_segments": "segments",
    "localize_cube": "segments",
    "AnalysisSpec": "spec",
    "Window": "spec",
    "Verification": "verify",
}

__all__ = [
    "MIME",
    "AnalysisSpec",
    "BroadBased",
    "CauseKind",
    "DimensionHistory",
    "DrillDown",
    "DriverSplit",
    "Element",
    "Grain",
    "Movement",
    "QualityDetail",
    "QualityIssue",
    "QualityReport",
    "RatioDecomposition",
    "RootCause",
    "Seasonality",
    "SegmentChange",
    "SegmentExplanation",
    "Verification",
    "Window",
    "broad_based",
    "contributions",
    "daily_by_dimension",
    "daily_totals",
    "decompose_ratio",
    "detect_grain",
    "dimension_history",
    "drill_down",
    "driver_split",
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
    "segment_table",
    "top_contributions",
]


class _Package(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name not in _EXPORTS:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        for export, module in _EXPORTS.items():  # all at once: they import each other anyway
            value = getattr(importlib.import_module(f".{module}", __name__), export)
            types.ModuleType.__setattr__(self, export, value)
        return types.ModuleType.__getattribute__(self, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            return  # the import system binding a submodule over the function of the same name
        super().__setattr__(name, value)

    def __dir__(self) -> list[str]:
        return sorted({*super().__dir__(), *__all__})


sys.modules[__name__].__class__ = _Package
