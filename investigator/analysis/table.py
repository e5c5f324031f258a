"""The Ibis table every analysis reads, by one name, and what the engine computes of it once.

A file, a DataFrame or a warehouse table is opened as an Ibis table expression; the analyses
aggregate it in its engine and only small grouped frames reach pandas.
"""

from __future__ import annotations

from typing import NamedTuple, TypeAlias

import ibis.expr.types as ir
import pandas as pd

Table: TypeAlias = ir.Table


class TableAggregates(NamedTuple):
    """A table with its per-period totals (`daily_totals`) and its period cube (`period_cube`),
    computed by the engine once and handed on (the cause check, then the report's charts)."""

    table: Table
    daily: pd.DataFrame
    cube: pd.DataFrame
