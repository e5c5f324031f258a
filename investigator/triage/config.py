"""The triage job's YAML config as a pydantic model, and the one-line messages for its mistakes.

A malformed key is a `ConfigError` naming the key and what to write instead, so a scheduler's log
shows the fix in one line (exit 2).
"""

from __future__ import annotations

import difflib
import os
import re
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from investigator.analysis.grain import WindowError
from investigator.analysis.ranges import check_baseline
from investigator.config import load_metrics
from investigator.errors import ConfigError, UserError
from investigator.fmt import clip, quoted
from investigator.request import Span, parse_end
from investigator.sources.urls import is_url, redact
from investigator.triage.score import Scoring
from investigator.yamlfile import load_yaml

Direction = Literal["both", "up", "down"]
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def _only_reads(sql: str | None, data: str | None) -> str | None:
    """`sql:` is a query a colleague may have written, run with the job's credentials: one
    read-only SELECT, or the config is refused (`sources.readonly`)."""
    from investigator.sources.readonly import config_query_refusal

    refused = config_query_refusal(sql, data, "") if sql else None
    if refused is not None:
        raise ValueError(refused)
    return sql


class Budget(BaseModel):
    """How much one triage run may spend on investigations."""

    model_config = ConfigDict(extra="forbid")

    max_investigations: int = Field(5, ge=0, description="Investigate at most this many flagged items.")
    max_minutes: float = Field(20.0, gt=0, description="Start no investigation after this many minutes.")
    max_tokens: int | None = Field(None, ge=1, description="LLM tokens for all investigations together.")


class MetricEntry(BaseModel):
    """One metric to scan, optionally overriding the job's defaults."""

    model_config = ConfigDict(extra="forbid")

    metric: str = Field(description="A name from metrics.yaml, a column (summed) or a ratio a/b.")
    data: str | None = None
    table: str | None = Field(None, description="With a URL `data`: the table (else the job's).")
    sql: str | None = Field(None, description="With a URL `data`: one SELECT whose result is the data.")
    time_column: str | None = None
    dimensions: list[str] | None = None
    scan_segments: list[str] | None = None
    direction: Direction | None = None

    @field_validator("sql")
    @classmethod
    def _sql(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _only_reads(value, info.data.get("data"))


class Target(BaseModel):
    """A metric with every default filled in: what the scan and the investigation use. Each value
    comes from the metric's entry, else its `metrics.yaml` definition, else the job's top level;
    `keys` says which key set it (`metrics[1].table`, `table`), for messages."""

    metric: str
    expression: str = Field("", description="the metric's measure or ratio; empty: the name itself")
    data: str
    time_column: str
    dimensions: list[str] | None
    table: str | None = None
    sql: str | None = None
    scan_segments: list[str]
    direction: Direction
    filter: str | None = Field(None, description="the rows the metric counts (a semantic metric's filter)")
    semantic_manifest: str | None = Field(None, description="the dbt semantic manifest that defines it")
    keys: dict[str, str] = Field(default_factory=dict)

    def key(self, name: str) -> str:
        return self.keys.get(name, name)


class TriageConfig(BaseModel):
    """`triage.yaml`: what to scan, how to judge it, how much to investigate, whom to tell."""

    model_config = ConfigDict(extra="forbid")

    data: str | None = Field(None, description="Default source for every metric.")
    table: str | None = Field(None, description="With a URL `data`: the table to read.")
    sql: str | None = Field(None, description="With a URL `data`: one SELECT whose result is the data.")
    time_column: str | None = Field(None, description="The date column; default: the metric's, else `date`.")
    window: Span = Field(default_factory=lambda: Span.of("7d"))
    baseline: str = Field("previous", description="previous, wow, mom, qoq, yoy, avgN or a range of days.")
    end: date | None = Field(None, description="Last day of the window; default: the last in the data.")
    dimensions: list[str] | None = None
    metrics: list[MetricEntry] = Field(min_length=1)
    scan_segments: list[str] = Field(default_factory=list)
    direction: Direction = "both"
    threshold: float = Field(3.0, gt=0, description="Robust z-score from which a move is anomalous.")
    baseline_windows: int = Field(
        5, ge=1, le=12, description="A day is compared with the median of this many earlier windows (1: one)."
    )
    min_volume: float = Field(10.0, ge=0, description="A count below this in both windows is not scored.")
    expected_years: int = Field(
        2, ge=1, description="Earlier years needed to call a move expected (most of them moved alike)."
    )
    notify_expected: bool = Field(False, description="Also notify (and investigate) moves labelled expected.")
    semantic_manifest: str | None = Field(
        None,
        description="A dbt semantic manifest (or dbt project folder): metrics named in it are read from it.",
    )
    max_segment_values: int = Field(50, ge=1, description="Scan the largest values of each dimension.")
    budget: Budget = Field(default_factory=Budget)
    workers: int = Field(2, ge=1, le=32)
    planner: Literal["offline", "llm"] = "offline"
    sandbox: Literal["auto", "local", "docker"] | None = None
    max_iterations: int | None = Field(None, ge=1)
    notify: list[str] = Field(default_factory=list, description="Apprise URLs; ${VAR} reads the env.")
    report_url: str | None = Field(
        None,
        description="Where the runs folder is served (https://reports.example.com/runs/): messages "
        "link <report_url><run id>/report.html; default: the report's absolute path.",
    )
    state: Path | None = Field(None, description="SQLite state; default: <home>/triage.sqlite.")
    runs_dir: Path | None = None

    @field_validator("metrics", mode="before")
    @classmethod
    def _metric_forms(cls, value: Any) -> Any:
        """`revenue`, `{metric: revenue, ...}` or `{revenue: {...}}` all name one metric."""
        if not isinstance(value, list):
            return value
        out = []
        for item in value:
            if isinstance(item, str):
                item = {"metric": item}
            elif isinstance(item, dict) and "metric" not in item and len(item) == 1:
                name, body = next(iter(item.items()))
                item = {"metric": str(name), **(body or {})} if isinstance(body, dict | None) else item
            out.append(item)
        return out

    @field_validator("sql")
    @classmethod
    def _sql(cls, value: str | None, info: ValidationInfo) -> str | None:
        return _only_reads(value, info.data.get("data"))

    @field_validator("baseline", mode="before")
    @classmethod
    def _baseline(cls, value: Any) -> Any:
        try:
            return check_baseline(str(value), flag="")
        except WindowError as e:
            raise ValueError(str(e)) from None

    @model_validator(mode="after")
    def _range_has_its_end(self) -> TriageConfig:
        if self.window.is_range and self.end is not None:
            raise ValueError(
                f"end {self.end} with window {self.window.text}: the range says where the window ends; "
                f"drop end, or write window: {self.window.n}d and end: {self.window.end}"
            )
        return self

    @field_validator("end", mode="before")
    @classmethod
    def _end(cls, value: Any) -> Any:
        """The forms `investigate --end` reads: a day, or a month, quarter or year (its last day);
        and `yesterday` or `today` (the job's day, UTC), for a job that must not re-scan a day."""
        if isinstance(value, str) and value.strip().lower() in ("yesterday", "today"):
            today = datetime.now(UTC).date()
            return today - timedelta(days=1) if value.strip().lower() == "yesterday" else today
        if isinstance(value, str | int) and not isinstance(value, bool):
            try:
                return parse_end(str(value))
            except UserError as e:
                raise ValueError(str(e).removeprefix("end ")) from None
        return value

    @model_validator(mode="after")
    def _every_metric_has_data(self) -> TriageConfig:
        self.targets()  # every metric's data named, with a table or a query where it is a URL
        return self

    def scoring(self) -> Scoring:
        """What the scan's scores read from this config."""
        return Scoring(
            baseline_windows=self.baseline_windows,
            min_volume=self.min_volume,
            threshold=self.threshold,
            expected_years=self.expected_years,
        )

    def _semantic(self) -> dict[str, Any]:
        """The metrics of `semantic_manifest` this job names, as `semantic.semantic_metric` reads them
        (a metric the manifest does not have is read as usual: metrics.yaml, a column, a ratio)."""
        if not self.semantic_manifest:
            return {}
        from investigator.semantic import load_manifest, semantic_metric

        try:
            manifest = load_manifest(self.semantic_manifest)
            names = {m.name for m in manifest.metrics}
            return {
                m.metric: semantic_metric(self.semantic_manifest, m.metric, manifest)
                for m in self.metrics
                if m.metric in names
            }
        except UserError as e:  # the library missing, a manifest that does not parse, an unsupported metric
            raise ValueError(f"semantic_manifest: {e}") from None

    def targets(self) -> list[Target]:
        """Every metric with its own keys, then the job's, then its `metrics.yaml` definition's (as
        flags go before a definition in `investigate`); a definition that names its own data goes
        before the job, with its time column and dimensions. Data and its table or query go
        together: the first level that names any of `data`, `table`, `sql` gives the table and
        query (a metric naming its own data takes no table from the job). A `ValueError` names the
        metric whose data is missing or incomplete."""
        known: dict[str, Any] = dict(load_metrics())
        semantic = self._semantic()
        known.update({name: sm.definition for name, sm in semantic.items()})
        out = []
        for i, m in enumerate(self.metrics):
            d = known.get(m.metric)
            here = f"metrics[{i}]"
            levels: list[tuple[str, Any]] = [(here, m), ("", self)]
            if d is not None:  # its own data goes before the job's; else the job's keys go first
                own = d.data and not m.data
                levels.insert(1 if own else 2, (f"metrics.yaml {m.metric}", d))
            keys: dict[str, str] = {}

            def pick(name: str, keys: dict[str, str] = keys, levels: list[tuple[str, Any]] = levels) -> Any:
                for where, level in levels:
                    value = getattr(level, name, None)
                    if value is not None:
                        keys[name] = f"{where}.{name}" if where else name
                        return value
                return None

            where, source = next(((w, lv) for w, lv in levels if lv.data or lv.table or lv.sql), levels[-1])
            data = pick("data")
            if not data:
                raise ValueError(f"metric {m.metric!r} has no data: add `data: sales.parquet` at the top")
            for name in ("table", "sql"):
                keys[name] = f"{where}.{name}" if where else name
            table, sql = source.table, source.sql
            sm = semantic.get(m.metric)
            if sm is not None and is_url(data) and not (table or sql):
                table, keys["table"] = sm.table, f"semantic model {sm.model}"  # its table, behind the URL
            if not is_url(data) and (table or sql):
                key = keys["table"] if table else keys["sql"]
                raise ValueError(
                    f"metric {m.metric!r}: `{key}` names data in a database, but its data {data} is a "
                    "file: give `data:` a connection URL (or env:VAR), or remove the key"
                )
            if is_url(data) and bool(table) == bool(sql):
                both = "names both; keep one" if table else "names neither"
                raise ValueError(
                    f"metric {m.metric!r}: its data {redact(data)} is a database and `{keys['table']}` / "
                    f"`{keys['sql']}` {both}: write `table: NAME` or `sql: select ...`"
                )
            out.append(
                Target(
                    metric=m.metric,
                    expression=d.expression if d else m.metric,
                    data=data,
                    table=table,
                    sql=sql,
                    time_column=pick("time_column") or "date",
                    dimensions=pick("dimensions"),
                    scan_segments=m.scan_segments if m.scan_segments is not None else self.scan_segments,
                    direction=m.direction or self.direction,
                    filter=sm.filter if sm is not None else None,
                    semantic_manifest=self.semantic_manifest if sm is not None else None,
                    keys={**keys, "metric": f"{here}.metric"},
                )
            )
            if m.scan_segments is not None:
                out[-1].keys["scan_segments"] = f"{here}.scan_segments"
        return out


def with_end(config: TriageConfig, end: str) -> TriageConfig:
    """The config with `--end` in place of its `end:` (checked as the key is: a range window
    refuses it), for a backfill or a job that must not re-scan a day."""
    try:
        return TriageConfig.model_validate({**config.model_dump(exclude_unset=True), "end": end})
    except ValidationError as e:
        raise ConfigError(f"--end: {explain(e)}") from None


def load_config(path: Path) -> TriageConfig:
    """Read and check `triage.yaml`; one `ConfigError` line per mistake (the first)."""
    try:
        raw = load_yaml(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist; pass --config path/to/triage.yaml") from None
    except ConfigError as e:
        raise ConfigError(f"{path}: {e}") from None
    except yaml.MarkedYAMLError as e:  # where the parser stopped: the line people open the file at
        mark = e.problem_mark or e.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        what = e.problem or e.context or str(e).splitlines()[0]
        raise ConfigError(f"{path}: not readable YAML: {where}{clip(what)}") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: not readable YAML: {clip(str(e).splitlines()[0])}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: must be a mapping of keys like `data:` and `metrics:`")
    try:
        return TriageConfig.model_validate(raw)
    except ValidationError as e:
        raise ConfigError(f"{path}: {explain(e)}") from None


def explain(error: ValidationError) -> str:
    """The first problem as `key: what is wrong; what to write instead`, the input it quotes cut
    short (a value can be huge)."""
    return clip(_explain(error.errors()[0]), 900)


def _explain(err: Any) -> str:
    loc = [str(p) for p in err["loc"]]
    key = _key_path(err["loc"]) or "config"
    kind, msg = err["type"], err["msg"].removeprefix("Value error, ")
    if kind == "extra_forbidden":
        parent = _model_at(loc[:-1])
        known = sorted(parent.model_fields) if parent else []
        close = difflib.get_close_matches(loc[-1], known, n=1)
        hint = f"did you mean `{close[0]}`?" if close else "remove it"
        return f"unknown key `{clip(key, 60)}`: {hint} (keys here: {', '.join(known)})"
    if kind == "missing":
        example = {"metrics": "metrics: [revenue, orders/sessions]"}.get(loc[-1], f"{loc[-1]}: ...")
        return f"`{key}` is required: add `{example}`"
    return f"`{clip(key, 60)}`: {clip(msg, 600)} (got {quoted(err.get('input'))})"


def _key_path(loc: tuple[int | str, ...]) -> str:
    out = ""
    for p in loc:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


_NESTED: dict[str, type[BaseModel]] = {"budget": Budget, "metrics": MetricEntry}


def _model_at(loc: list[str]) -> type[BaseModel] | None:
    names = [p for p in loc if not p.isdigit()]
    model: type[BaseModel] = TriageConfig
    for name in names:
        nested = _NESTED.get(name)
        if nested is None:
            return None
        model = nested
    return model


def expand_targets(urls: list[str], env: dict[str, str] | None = None) -> tuple[list[str], list[str]]:
    """Notify URLs with `${VAR}` read from the environment, and the values read (to mask them)."""
    env = dict(os.environ) if env is None else env
    secrets: list[str] = []
    out = []
    for i, url in enumerate(urls):

        def sub(m: re.Match[str], i: int = i) -> str:
            name = m.group(1)
            if name not in env:
                raise ConfigError(
                    f"notify[{i}]: ${{{name}}} is not set in the environment: export {name}=... "
                    "for the job, or remove that URL"
                )
            secrets.append(env[name])
            return env[name]

        out.append(_VAR.sub(sub, url))
    return out, secrets
