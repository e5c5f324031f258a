"""Metrics as a dbt project defines them: its semantic layer's `semantic_manifest.json`, read with
dbt-semantic-interfaces (the library dbt and MetricFlow share), turned into the metric definition a
run investigates.

A semantic model is one table (`node_relation`) with measures (an aggregation of a column),
dimensions (categorical, and the time dimension measures are aggregated by) and entities. A simple
metric is one measure, a ratio metric two simple metrics divided, a derived metric an expression of
metrics. Here: a measure becomes `sum(col)`, `count(col)`, `count_distinct(col)` or `avg(col)`; a
ratio, and a derived metric whose expression is `a / b`, become a ratio; a derived metric that
multiplies or divides metrics (`sessions * conversion * aov`) is its driver tree, investigated as
the measure (or ratio) its inputs reduce to once what they share cancels; the metric's and its
inputs' filters on the model's own dimensions become the run's row filter; the model's categorical
dimensions are the default dimensions; its time dimension is the time column. What is not
supported is refused in one line naming the metric and the part: cumulative and conversion metrics,
other derived expressions (sums, differences, constants, a product that reduces to no measure or
ratio of two), measures over SQL expressions, min/max/median/percentile, filters on
other semantic models' dimensions (joins through entities) or on time.

A dbt project folder is read at `target/semantic_manifest.json`, which `dbt parse` writes.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from investigator.analysis.spec import parse_tree
from investigator.config import MetricDefinition
from investigator.errors import UserError

MANIFEST = Path("target") / "semantic_manifest.json"
_COLUMN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_DIMENSION = re.compile(r"\{\{\s*Dimension\(\s*['\"]([^'\"]+)['\"]\s*\)\s*\}\}")
_RATIO = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*/\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")
_AGG = {"sum": "sum", "count": "count", "count_distinct": "count_distinct", "average": "avg"}
_REFUSED = {
    "min": "a minimum is one row's value, not a total of segments",
    "max": "a maximum is one row's value, not a total of segments",
    "median": "a median is no total of segments",
    "percentile": "a percentile is no total of segments",
    "sum_boolean": "make the column an integer in the model and sum it",
}


class SemanticMetric(BaseModel):
    """A semantic-layer metric as a run takes it: its definition, and the rows its filter keeps."""

    name: str
    definition: MetricDefinition
    filter: str | None = None
    model: str
    table: str | None = None  # the model's table (`node_relation.alias`): where a URL's data is


def manifest_path(path: str | Path) -> Path:
    """The manifest file: `path` itself, or a dbt project's `target/semantic_manifest.json`."""
    p = Path(path).expanduser()
    found = p / MANIFEST if p.is_dir() else p
    if not found.is_file():
        where = f"{p} has no {MANIFEST}: run `dbt parse` in the project" if p.is_dir() else f"{p} not found"
        raise UserError(f"semantic manifest: {where}")
    return found


def load_manifest(path: str | Path) -> Any:
    """The parsed manifest (dbt-semantic-interfaces' `PydanticSemanticManifest`)."""
    try:
        from dbt_semantic_interfaces.implementations.semantic_manifest import PydanticSemanticManifest
    except ImportError:
        raise UserError(
            "reading a dbt semantic manifest needs dbt-semantic-interfaces: "
            "pip install 'investigator[semantic]'"
        ) from None
    found = manifest_path(path)
    try:
        return PydanticSemanticManifest.parse_raw(found.read_text())
    except Exception as e:  # the library's validation errors: say which file and what
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise UserError(f"semantic manifest {found} does not parse: {first}") from None


def semantic_definitions(path: str | Path) -> dict[str, MetricDefinition]:
    """Every metric of the manifest that a run can investigate, by name (the nodes a driver tree
    names); those it refuses are left out."""
    manifest, out = load_manifest(path), {}
    for metric in manifest.metrics:
        try:
            out[metric.name] = semantic_metric(path, metric.name, manifest).definition
        except UserError:
            continue
    return out


def semantic_metric(path: str | Path, name: str, manifest: Any = None) -> SemanticMetric:
    """The metric `name` of the manifest at `path` (parsed already: `manifest`), as a run
    investigates it."""
    manifest = manifest if manifest is not None else load_manifest(path)
    metrics = {m.name: m for m in manifest.metrics}
    metric = metrics.get(name)
    if metric is None:
        raise UserError(
            f"metric {name!r} is not in {path}; its metrics: {', '.join(sorted(metrics)) or 'none'}"
        )
    kind = _kind(metric)
    params = metric.type_params
    drivers: str | None = None
    if kind == "simple":
        sides = [_simple(manifest, metric)]
    elif kind == "ratio":
        sides = [
            _input(manifest, metrics, name, params.numerator),
            _input(manifest, metrics, name, params.denominator),
        ]
    elif kind == "derived":
        sides, drivers = _derived(manifest, metrics, metric)
    else:
        raise UserError(
            f"metric {name!r}: {kind} metrics are not supported (simple, ratio and a/b derived are)"
        )
    models = {model.name for model, _, _ in sides}
    if len(models) > 1:
        raise UserError(
            f"metric {name!r}: its measures are in different semantic models ({', '.join(sorted(models))}): "
            "joins through entities are not supported"
        )
    model = sides[0][0]
    filters = {f for _, _, fs in sides for f in fs} | set(_filters(metric.filter))
    if len(sides) == 2 and sides[0][2] != sides[1][2]:
        raise UserError(f"metric {name!r}: a filter on one side of a ratio is not supported")
    where = [_render(f, model, name) for f in sorted(filters)]
    expression = "/".join(expr for _, expr, _ in sides)
    counted = set(re.findall(r"\(([A-Za-z_][A-Za-z0-9_]*)\)", expression))  # no dimension
    categorical = [_column(d, name) for d in model.dimensions if _kind_of(d) == "categorical"]
    definition = MetricDefinition(
        expression=expression,
        description=metric.description or "",
        dimensions=[c for c in categorical if c not in counted] or None,
        time_column=_time_column(model, name),
        drivers=drivers,
    )
    filter_sql = (" AND ".join(f"({w})" for w in where) if len(where) > 1 else where[0]) if where else None
    table = model.node_relation.alias
    return SemanticMetric(name=name, definition=definition, filter=filter_sql, model=model.name, table=table)


def _kind(metric: Any) -> str:
    return str(getattr(metric.type, "value", metric.type)).lower()


def _kind_of(dimension: Any) -> str:
    return str(getattr(dimension.type, "value", dimension.type)).lower()


def _simple(manifest: Any, metric: Any) -> tuple[Any, str, tuple[str, ...]]:
    """A simple metric's semantic model, measure expression and filters (metric and measure input)."""
    measure_input = metric.type_params.measure
    if measure_input is None:
        raise UserError(f"metric {metric.name!r}: a simple metric without a measure is not supported")
    for model in manifest.semantic_models:
        for measure in model.measures:
            if measure.name == measure_input.name:
                column = measure.expr or measure.name
                agg = str(getattr(measure.agg, "value", measure.agg)).lower()
                if agg not in _AGG:
                    why = _REFUSED.get(agg, "not a total of segments")
                    raise UserError(
                        f"metric {metric.name!r}: measure {measure.name!r} aggregates with {agg}, which is "
                        f"not supported ({why}); sum, count, count_distinct and average are"
                    )
                if str(column).strip() == "1" and agg in ("sum", "count"):
                    return model, "count(*)", tuple(_filters(measure_input.filter))
                if not _COLUMN.match(str(column)):
                    raise UserError(
                        f"metric {metric.name!r}: measure {measure.name!r} is over the SQL expression "
                        f"{column!r}; only a column is supported (add it as a column of the model)"
                    )
                return model, f"{_AGG[agg]}({column})", tuple(_filters(measure_input.filter))
    raise UserError(f"metric {metric.name!r}: measure {measure_input.name!r} is in no semantic model")


def _input(manifest: Any, metrics: dict[str, Any], name: str, ref: Any) -> tuple[Any, str, tuple[str, ...]]:
    """One side of a ratio or derived metric: a simple metric, with the input's own filter."""
    inner = metrics.get(ref.name) if ref is not None else None
    if inner is None or _kind(inner) != "simple":
        raise UserError(f"metric {name!r}: its input {getattr(ref, 'name', None)!r} is not a simple metric")
    if getattr(ref, "offset_window", None) or getattr(ref, "offset_to_grain", None):
        raise UserError(f"metric {name!r}: an input with an offset (a period earlier) is not supported")
    model, expr, filters = _simple(manifest, inner)
    return model, expr, tuple(sorted({*filters, *_filters(ref.filter), *_filters(inner.filter)}))


def _derived(
    manifest: Any, metrics: dict[str, Any], metric: Any
) -> tuple[list[tuple[Any, str, tuple[str, ...]]], str | None]:
    """A derived metric's sides, and its driver tree when it has one. `a / b` of two simple metrics
    is the ratio it is. Metrics multiplied or divided (`sessions * conversion * aov`) are a tree:
    each input is one measure or a ratio of two, and the product is investigated as what remains
    once the measures that appear above and below cancel (sessions x orders/sessions x
    revenue/orders is revenue); the tree is written with the inputs' metric names, not aliases."""
    expr = metric.type_params.expr or ""
    inputs = {(i.alias or i.name): i for i in metric.type_params.metrics or []}
    ratio = _RATIO.match(expr)
    if ratio is not None and all(_is_simple(metrics, inputs.get(n)) for n in ratio.groups()):
        return [_input(manifest, metrics, metric.name, inputs.get(n)) for n in ratio.groups()], None
    try:
        tree = parse_tree(expr)
    except ValueError:
        raise UserError(
            f"metric {metric.name!r}: the derived expression {expr!r} is not supported "
            "(only metrics multiplied or divided, e.g. a / b or sessions * conversion * aov)"
        ) from None
    powers: dict[str, int] = {}
    found: dict[str, tuple[Any, str, tuple[str, ...]]] = {}
    names = []
    for alias, power in tree:
        ref = inputs.get(alias)
        if ref is None:
            raise UserError(f"metric {metric.name!r}: {alias!r} is not one of its input metrics")
        names.append(("*" if power > 0 else "/", ref.name))
        for side, sign in zip(_factors(manifest, metrics, metric.name, ref), (1, -1), strict=False):
            found[side[1]] = side
            powers[side[1]] = powers.get(side[1], 0) + sign * power
    left = {e: p for e, p in powers.items() if p}
    above = [found[e] for e, p in left.items() if p == 1]
    below = [found[e] for e, p in left.items() if p == -1]
    if len(above) != 1 or len(below) > 1 or len(left) != len(above) + len(below):
        ups = " * ".join(e for e, p in left.items() for _ in range(p)) or "1"
        downs = "".join(f" / {e}" for e, p in left.items() for _ in range(-p))
        rest = ups + downs if left else "a constant"
        raise UserError(
            f"metric {metric.name!r}: {expr!r} reduces to {rest}, not one measure or a ratio of two, "
            "so it is no tree of this metric"
        )
    if len({side[2] for side in found.values()}) > 1:
        raise UserError(f"metric {metric.name!r}: a filter on some of its drivers only is not supported")
    models = sorted({side[0].name for side in found.values()})
    if len(models) > 1:
        raise UserError(
            f"metric {metric.name!r}: its drivers are in different semantic models ({', '.join(models)}): "
            "joins through entities are not supported"
        )
    sides = [*above, *below]
    text = " ".join(f"{op} {n}" for op, n in names)[2:]
    return sides, text


def _is_simple(metrics: dict[str, Any], ref: Any) -> bool:
    inner = metrics.get(ref.name) if ref is not None else None
    return inner is not None and _kind(inner) == "simple"


def _factors(
    manifest: Any, metrics: dict[str, Any], name: str, ref: Any
) -> list[tuple[Any, str, tuple[str, ...]]]:
    """A driver of a tree as one measure (a simple metric) or two divided (a ratio metric, or a
    derived `a / b` of simple metrics), with the input's own filter; a tree within a tree is
    refused."""
    inner = metrics.get(ref.name)
    if inner is None:
        raise UserError(f"metric {name!r}: its driver {ref.name!r} is not a metric of the manifest")
    kind = _kind(inner)
    if kind == "simple":
        return [_input(manifest, metrics, name, ref)]
    if kind == "ratio":
        params = inner.type_params
        sides = [
            _input(manifest, metrics, name, params.numerator),
            _input(manifest, metrics, name, params.denominator),
        ]
    elif kind == "derived":
        sides, tree = _derived(manifest, metrics, inner)
        if tree is not None:
            raise UserError(
                f"metric {name!r}: its driver {ref.name!r} is a tree itself, which is not supported"
            )
    else:
        raise UserError(f"metric {name!r}: its driver {ref.name!r} is {kind}, not a simple or ratio metric")
    own = tuple(sorted({*_filters(ref.filter), *_filters(inner.filter)}))
    return [(model, expr, tuple(sorted({*fs, *own}))) for model, expr, fs in sides]


def _filters(intersection: Any) -> list[str]:
    if intersection is None:
        return []
    return [f.where_sql_template for f in intersection.where_filters]


def _render(template: str, model: Any, name: str) -> str:
    """A filter's Jinja template as SQL over the table's columns: `{{ Dimension('order__country') }}`
    becomes the model's column; anything else (time dimensions, entities, macros) is refused."""
    columns = {d.name: _column(d, name) for d in model.dimensions}

    def column(m: re.Match[str]) -> str:
        dim = m.group(1).split("__")[-1]
        if dim not in columns:
            raise UserError(
                f"metric {name!r}: its filter names {m.group(1)!r}, not a dimension of semantic model "
                f"{model.name!r} (joins through entities are not supported)"
            )
        return columns[dim]

    sql = _DIMENSION.sub(column, template)
    if "{{" in sql or "{%" in sql:
        raise UserError(
            f"metric {name!r}: its filter {template!r} is not supported (only Dimension(...) filters)"
        )
    return sql.strip()


def _column(dimension: Any, name: str) -> str:
    column = str(dimension.expr or dimension.name)
    if not _COLUMN.match(column):
        raise UserError(
            f"metric {name!r}: dimension {dimension.name!r} is the SQL expression {column!r}; "
            "only a column is supported"
        )
    return column


def _time_column(model: Any, name: str) -> str | None:
    """The column of the model's aggregation time dimension (its default, else its only time one)."""
    times = [d for d in model.dimensions if _kind_of(d) == "time"]
    wanted = model.defaults.agg_time_dimension if model.defaults is not None else None
    for measure in model.measures:
        wanted = wanted or measure.agg_time_dimension
    chosen = [d for d in times if d.name == wanted] or times[:1]
    return _column(chosen[0], name) if chosen else None
