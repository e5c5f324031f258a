"""A driver tree: which factor of a metric moved. Revenue is sessions x orders/sessions x
revenue/orders; when revenue falls, the first question is whether traffic, conversion or the basket
moved.

The split is the log-mean (LMDI) one: each driver carries `L(M1, M0) * ln(d1 / d0)` of the metric's
change, where `L` is the logarithmic mean of the metric's two values. The parts add up to the change
exactly (no residual, whatever the sizes of the moves), a driver that held carries nothing, and the
split does not depend on the order the drivers are written in, unlike a chain of "hold the others
fixed" steps. It needs every value positive: a metric that crosses zero has no multiplicative
story, and the split says so instead of forcing one.

Each driver is also judged against its own history, as the metric is (`movement`: its change
against the changes of earlier windows of the same length): conversion moving 3% in a week where it
always moves 3% carries a part of the change but did not "move"; the verdict names a driver only
when its own move is beyond its usual ones (or its history is too short to tell).
"""

from __future__ import annotations

import math
from typing import Literal

import ibis
from pydantic import BaseModel, Field

from .movement import movement
from .queries import daily_totals, is_extract, leaves
from .spec import AnalysisSpec, Driver, Measure, Window
from .table import Table

AGREE = 0.005  # the drivers multiply to the metric within this (rounding in the data), or no tree


class DriverPart(BaseModel):
    """One driver's values in the two windows and the part of the metric's change it carries."""

    name: str
    text: str = Field(description="how the driver is measured, e.g. sum(orders)/sum(sessions)")
    baseline: float
    current: float
    change_pct: float | None
    part: float = Field(description="the metric's change this driver carries, in the metric's units")
    share: float | None = Field(description="part / the metric's change (None when it did not move)")
    z: float | None = Field(None, description="its change against its own earlier windows' changes")
    usual: bool | None = Field(
        None, description="whether its change is within its usual variation (None: too little history)"
    )


class DriverSplit(BaseModel):
    """The metric's change split across the drivers of its tree; `reason` says why there is none."""

    kind: Literal["drivers"] = "drivers"
    metric: str
    tree: str = Field(description="the tree as written: sessions * conversion * aov")
    baseline: float | None = None
    current: float | None = None
    change: float | None = None
    parts: list[DriverPart] = Field(default_factory=list)
    reason: str = ""

    @property
    def split(self) -> bool:
        return bool(self.parts) and not self.reason

    def part(self, name: str) -> DriverPart | None:
        return next((p for p in self.parts if p.name == name), None)


def tree_text(spec: AnalysisSpec) -> str:
    """`sessions * conversion * aov`, as the metric's definition writes it."""
    out = ""
    for i, d in enumerate(spec.drivers):
        out += ("" if i == 0 else (" * " if d.power > 0 else " / ")) + d.name
    return out


def driver_split(table: Table, spec: AnalysisSpec) -> DriverSplit:
    """Each driver's value in the current window and the baseline (one aggregate query per window,
    in the engine), and its part of the metric's change."""
    tree = tree_text(spec)
    if not spec.drivers:
        return DriverSplit(metric=spec.metric, tree=tree, reason="the metric has no driver tree")
    own = [_own(spec, n) for n in spec.measures]
    measures = {m.text: m for m in [*own, *(m for d in spec.drivers for m in _sides(d))]}
    cur = _sums(table, spec, spec.current, measures)
    base = {k: spec.scaled(v) for k, v in _sums(table, spec, spec.baseline, measures).items()}
    values = [(d, _driver(d, base), _driver(d, cur)) for d in spec.drivers]
    metric0, metric1 = (_ratio(own, sums) for sums in (base, cur))
    out = DriverSplit(metric=spec.metric, tree=tree, baseline=metric0, current=metric1)
    if metric0 is None or metric1 is None:
        return out.model_copy(update={"reason": "the metric has no value in a window"})
    out = out.model_copy(update={"change": metric1 - metric0})
    bad = [d.name for d, b, c in values if b is None or c is None or b <= 0 or c <= 0]
    if bad or metric0 <= 0 or metric1 <= 0:
        why = f"{bad[0]} is zero or negative" if bad else f"{spec.metric} is zero or negative"
        return out.model_copy(update={"reason": f"{why} in a window: no multiplicative split"})
    product = [math.prod((v[i] or 0.0) ** d.power for d, *v in values) for i in (0, 1)]
    for made, real in zip(product, (metric0, metric1), strict=True):
        if abs(made - real) > AGREE * abs(real):
            return out.model_copy(
                update={"reason": f"{tree} gives {made:,.4g}, not {spec.metric}'s {real:,.4g}: the drivers "
                        "do not multiply to the metric here"}
            )  # fmt: skip
    change = metric1 - metric0
    mean = change / math.log(metric1 / metric0) if metric1 != metric0 else metric0
    parts = []
    for d, b, c in values:
        assert b is not None and c is not None  # checked positive above
        part = mean * d.power * math.log(c / b)
        usual = _own_movement(table, spec, d)
        parts.append(
            DriverPart(name=d.name, text=_text(d), baseline=b, current=c, change_pct=c / b - 1, part=part,
                       share=part / change if change else None, z=usual[0], usual=usual[1])
        )  # fmt: skip
    return out.model_copy(update={"parts": parts})


def _own_movement(table: Table, spec: AnalysisSpec, d: Driver) -> tuple[float | None, bool | None]:
    """The driver's z against its own history and whether its move is within its usual ones (None
    when the history is too short to tell): `movement` of the driver as a metric of its own."""
    sides = _sides(d)
    own = spec.model_copy(
        update={"metric": d.name, "numerator": d.numerator.name,
                "denominator": d.denominator.name if d.denominator is not None else None,
                "computed": {m.name: m for m in sides if m.kind != "sum"}, "drivers": []}
    )  # fmt: skip
    m = movement(daily_totals(table, own), own)
    if m.short_history or m.z is None:
        return m.z, None
    return m.z, not m.significant


def driver_measures(spec: AnalysisSpec) -> list[Measure]:
    """The sums and counts the tree's drivers are made of (an engine's extract carries them)."""
    return list({m.text: m for d in spec.drivers for m in _sides(d)}.values())


def driver_value(t: Table, m: Measure) -> ibis.Value:
    """One of the tree's measures over `t`'s rows: a column summed, rows or values counted; on an
    engine's extract, its per-group column summed."""
    if is_extract(t):
        return t[m.name].sum()
    if m.kind == "count":
        return t.count() if m.column is None else t[m.column].count()
    return t[m.column or ""].sum()  # the tree's measures are sums and counts (`spec.Driver`)


def _sides(d: Driver) -> list[Measure]:
    return [d.numerator, *([d.denominator] if d.denominator is not None else [])]


def _text(d: Driver) -> str:
    return d.numerator.text + (f"/{d.denominator.text}" if d.denominator is not None else "")


def _sums(table: Table, spec: AnalysisSpec, w: Window, measures: dict[str, Measure]) -> dict[str, float]:
    rows = leaves(table)
    rows = rows.filter(rows[spec.time_column].between(w.start, w.end))
    aggs = {f"m{i}": driver_value(rows, m) for i, m in enumerate(measures.values())}
    got = rows.aggregate(**aggs).to_pandas().iloc[0]
    return {k: float(got[f"m{i}"] or 0.0) for i, k in enumerate(measures)}


def _driver(d: Driver, sums: dict[str, float]) -> float | None:
    top = sums[d.numerator.text]
    if d.denominator is None:
        return top
    bottom = sums[d.denominator.text]
    return top / bottom if bottom else None


def _own(spec: AnalysisSpec, name: str) -> Measure:
    """One of the metric's own measures (a column summed unless the spec computes it)."""
    return spec.computed.get(name) or Measure(column=name)


def _ratio(own: list[Measure], sums: dict[str, float]) -> float | None:
    """The metric's value in a window from its own measures, not from the drivers."""
    top = sums[own[0].text]
    if len(own) == 1:
        return top
    bottom = sums[own[1].text]
    return top / bottom if bottom else None
