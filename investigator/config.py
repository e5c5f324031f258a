"""Settings: defaults shipped in the package (`investigator/configs/*.yaml`), overridden by a
project's own `configs/` folder in the working directory (or `INVESTIGATOR_CONFIG_DIR`), then by
`INVESTIGATOR_*` env vars, then by CLI flags. Metric definitions live in `metrics.yaml`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from investigator.errors import ConfigError
from investigator.fmt import clip, quoted
from investigator.yamlfile import load_yaml

DEFAULTS_DIR = Path(__file__).resolve().parent / "configs"


def config_dir() -> Path:
    """The project's config folder: `INVESTIGATOR_CONFIG_DIR`, else `./configs`. A folder the
    user named must exist: running on built-in defaults instead would surprise."""
    named = os.environ.get("INVESTIGATOR_CONFIG_DIR")
    if named is None:
        return Path("configs")
    if not Path(named).is_dir():
        raise ConfigError(
            f"INVESTIGATOR_CONFIG_DIR={named} is not a folder; create it, or unset the variable "
            "to use ./configs and the built-in defaults"
        )
    return Path(named)


def read_config(filename: str) -> dict[str, Any]:
    """The package default for `filename` with the project's file laid over it (top-level keys;
    `metrics` merges by name, so a project adds metrics without repeating the defaults)."""
    merged = _read_yaml(DEFAULTS_DIR / filename)
    project = config_dir() / filename
    if project.resolve() == (DEFAULTS_DIR / filename).resolve():
        return merged
    for key, value in _read_yaml(project).items():
        if key == "metrics" and isinstance(value, dict) and isinstance(merged.get(key), dict):
            value = {**merged[key], **value}
        merged[key] = value
    return merged


def _read_yaml(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = load_yaml(path.read_text()) or {}
    except ConfigError as e:
        raise ConfigError(f"config file {path}: {e}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise ConfigError(f"config file {path} is not valid YAML: {clip(e, 600)}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of settings, not {type(data).__name__}")
    return data


class YamlSource(PydanticBaseSettingsSource):
    """Defaults from `configs/<filename>`, below env vars and arguments in precedence."""

    def __init__(self, settings_cls: type[BaseSettings], filename: str) -> None:
        super().__init__(settings_cls)
        self.filename = filename

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        return read_config(self.filename)


class YamlSettings(BaseSettings):
    """Settings whose defaults come from `configs/<yaml_file>`; env vars and arguments win."""

    yaml_file: ClassVar[str]

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, YamlSource(settings_cls, cls.yaml_file)


class RunSettings(BaseModel):
    """How an investigation runs: saved with the run, so a resume runs the same way."""

    model_config = ConfigDict(extra="forbid")

    max_iterations: int = Field(15, ge=1, description="Stop with a partial conclusion after this many steps.")
    min_iterations_before_conclude: int = Field(
        3, ge=0, description="Refuse a conclusion before this many steps."
    )
    stall_threshold: int = Field(
        4, ge=1, description="Steps without hypothesis progress before a forced pivot."
    )
    max_findings_in_context: int = Field(10, ge=1, description="Compressed findings shown to the planner.")
    last_result_max_chars: int = Field(
        4000, ge=200, description="The last output is cut to this many characters."
    )
    context_budget_tokens: int = Field(
        6000, ge=500, description="Upper bound on the context the planner sees."
    )
    execution_timeout_s: float = Field(
        60.0, gt=0, description="A kernel step is interrupted after this long."
    )
    max_consecutive_errors: int = Field(3, ge=1, description="Code errors in a row before a forced pivot.")
    max_tokens_per_run: int | None = Field(
        None, ge=1, description="Conclude gracefully once planner calls used this many tokens."
    )
    verify_tolerance: float = Field(
        0.25, gt=0, allow_inf_nan=False, description="How far a claimed share may be from the recomputed one."
    )
    planner: Literal["offline", "llm"] = Field("offline", description="Who decides the next step.")
    sandbox: Literal["auto", "local", "docker", "inprocess"] = Field(
        "auto",
        description="Where code runs: MCP server with a local or Docker kernel. auto: local for the "
        "offline planner (its code is ours), Docker for the LLM planner (model-written code).",
    )

    @model_validator(mode="after")
    def _llm_code_stays_in_a_kernel(self) -> Self:
        if self.planner == "llm" and self.sandbox == "inprocess":
            raise ValueError("the llm planner's code runs only in a kernel: use sandbox local or docker")
        return self

    def run_settings(self) -> RunSettings:
        """Just the fields a run saves (not where runs live, which is the caller's)."""
        return RunSettings.model_validate(self.model_dump(include=set(RunSettings.model_fields)))


class Settings(YamlSettings, RunSettings):
    """How an investigation runs, and where runs are kept: package defaults, the project's
    `configs/investigator.yaml`, `INVESTIGATOR_*` variables, then flags."""

    yaml_file: ClassVar[str] = "investigator.yaml"

    model_config = SettingsConfigDict(env_prefix="INVESTIGATOR_", extra="forbid")

    runs_dir: Path = Field(Path("runs"), description="Where run folders (state, outputs, reports) go.")
    home: Path = Field(
        Path(".investigator"), description="The project's memory: facts ledger, recall store, triage state."
    )


def load_settings(**overrides: Any) -> Settings:
    """Settings with CLI overrides applied; a malformed value is a `ConfigError`."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as e:
        raise ConfigError("invalid settings: " + "; ".join(_setting_problem(e) for e in e.errors())) from None


def _setting_problem(err: Any) -> str:
    """One setting's problem in the tool's words, named as in the config file (and its flag)."""
    name = clip(".".join(str(p) for p in err["loc"]) or "settings", 60)
    ctx, got = err.get("ctx") or {}, err.get("input")
    bounds = {"greater_than_equal": ("at least", "ge"), "greater_than": ("more than", "gt")}
    if err["type"] in bounds:
        words, key = bounds[err["type"]]
        return f"{name} must be {words} {ctx.get(key)} (got {clip(got)})"
    if err["type"] == "literal_error":
        return f"{name} must be one of {ctx.get('expected')} (got {quoted(got)})"
    if err["type"] == "extra_forbidden":
        return f"{name} is not a setting"
    msg = clip(err["msg"], 600)  # our own words, which quote at most a clipped value
    return f"{name} {msg[:1].lower()}{msg[1:]} (got {quoted(got)})"


class MetricDefinition(BaseModel):
    """A named metric: one measure or a ratio `a/b` of two. A measure is a column (summed),
    `sum(col)`, `count(*)`, `count(col)`, `count_distinct(col)` (over the whole window),
    `count_distinct_daily(col)` (user-days), `approx_count_distinct(col)` or `avg(col)`, e.g.
    `count_distinct(user_id)` (active users) or `sum(revenue)/count_distinct(user_id)`. Its data
    may be given here too: a file, or a URL (`env:VAR`) with a table or a query."""

    model_config = {"extra": "forbid"}

    expression: str
    description: str = ""
    dimensions: list[str] | None = None
    time_column: str | None = None
    data: str | None = Field(None, description="A file, a connection URL, or env:VAR naming one.")
    table: str | None = Field(None, description="The table at `data` when it is a URL.")
    sql: str | None = Field(None, description="A query at `data` when it is a URL, used as the table.")
    source: str | None = Field(
        None, description="A name for this data: metrics whose sources share it share their memories."
    )
    drivers: str | None = Field(
        None,
        description="Its driver tree: named metrics whose product is this one (sessions * conversion * aov).",
    )

    @field_validator("drivers")
    @classmethod
    def _tree_parses(cls, value: str | None) -> str | None:
        from investigator.analysis.spec import parse_tree

        if value is not None:
            parse_tree(value)  # a ValueError says what is wrong
        return value

    @field_validator("expression")
    @classmethod
    def _measures_parse(cls, value: str) -> str:
        from investigator.analysis.spec import average_of, parse_measure

        if average_of(value) is not None:  # avg(col): sum(col)/count(col)
            return value
        for side in value.split("/"):
            parse_measure(side)  # a ValueError names what is wrong
        return value

    @model_validator(mode="after")
    def _query_only_reads(self) -> Self:
        """A colleague's `sql:` runs with your credentials: one read-only SELECT, or nothing."""
        from investigator.sources.readonly import config_query_refusal

        refused = config_query_refusal(self.sql, self.data, "sql") if self.sql else None
        if refused is not None:
            raise ValueError(refused)
        return self


def load_metrics() -> dict[str, MetricDefinition]:
    path = config_dir() / "metrics.yaml"
    raw = read_config("metrics.yaml").get("metrics", {}) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: 'metrics' must map names to definitions")
    out = {}
    for name, body in raw.items():
        try:
            out[str(name)] = MetricDefinition.model_validate(
                body if isinstance(body, dict) else {"expression": body}
            )
        except ValidationError as e:
            problem = clip(e.errors()[0]["msg"].removeprefix("Value error, "), 600)
            raise ConfigError(f"{path}: metric {quoted(name)} is malformed: {problem}") from None
    return out
