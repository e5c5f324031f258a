"""LLM planner settings: defaults in `configs/llm.yaml`, overridden by `INVESTIGATOR_LLM_*` env vars
(and the standard `OPENAI_API_KEY` / `OPENAI_BASE_URL`), overridden by keyword arguments.

The API key is a `SecretStr`: it prints as `**********` and is never written anywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import SettingsConfigDict

from investigator.config import YamlSettings
from investigator.errors import ConfigError
from investigator.run.tokens import Phase

Mode = Literal["auto", "json_schema", "json_object_schema", "tools", "json", "md_json"]
# what `auto` tries, strictest first: a schema the server enforces (OpenAI, vLLM, Ollama), llama.cpp's
# json_object with a schema (a grammar), a forced tool call, then JSON it only parses, then Markdown
AUTO_ORDER: tuple[Mode, ...] = ("json_schema", "json_object_schema", "tools", "json", "md_json")
ANSWER_TOKENS: dict[Phase, int] = {"decide": 600, "reflect": 400, "compress": 400}


class LLMSettings(YamlSettings):
    """How the LLM planner reaches its model and how patient it is."""

    yaml_file: ClassVar[str] = "llm.yaml"

    model_config = SettingsConfigDict(env_prefix="INVESTIGATOR_LLM_", extra="forbid")

    api_key: SecretStr | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_API_KEY", "INVESTIGATOR_LLM_API_KEY", "api_key"),
        description="Key for the endpoint; never enters the kernel, run folder, logs or reports.",
    )
    base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("OPENAI_BASE_URL", "INVESTIGATOR_LLM_BASE_URL", "base_url"),
        description="Any OpenAI-compatible endpoint (vLLM, Ollama, a proxy); None means OpenAI.",
    )
    model: str = Field("gpt-4o-mini", description="Model name the endpoint knows.")
    mode: Mode = Field(
        "auto",
        description="How structured output is asked for; auto finds, once per endpoint, the strictest "
        "the server enforces (json_schema, json_object_schema, tools, json, md_json).",
    )
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature; 0 for repeatable runs.")
    max_output_tokens: dict[Phase, int] = Field(
        default_factory=lambda: dict(ANSWER_TOKENS),
        description="Cap on each answer's length, per call kind (decide, reflect, compress); one "
        "number caps them all. An answer cut at the cap is reported as cut off, not re-asked.",
    )
    stall_timeout_s: float = Field(
        120.0,
        gt=0,
        description="The answer is streamed: no token for this long (the first one included, which "
        "waits for the prompt to be read) is a stalled model, and the step is left to the offline "
        "planner. The total time of an answer is not limited.",
    )
    connect_timeout_s: float = Field(10.0, gt=0, description="Opening a connection gives up after this long.")
    max_validation_retries: int = Field(
        2, ge=0, description="Re-asks with the validation error fed back before the offline fallback."
    )
    reflect_every: int = Field(5, ge=0, description="Self-assessment every N iterations; 0 turns it off.")
    give_up_after: int = Field(
        2,
        ge=0,
        description="After this many steps in a row the model could not decide (invalid, cut off, "
        "stalled), the rest of the run is planned offline without asking it; 0 never gives up.",
    )
    rate_limit_backoff_s: list[float] = Field(
        [2.0, 10.0, 60.0, 300.0, 1800.0],
        min_length=1,
        description="Waits after successive 429s without Retry-After; the last tier repeats.",
    )
    rate_limit_max_retries: int = Field(8, ge=0, description="429s tolerated for one request.")
    max_wait_s: float = Field(1800.0, gt=0, description="Cap on any single wait, Retry-After included.")
    connection_backoff_s: list[float] = Field(
        [5.0, 15.0, 30.0, 60.0, 120.0],
        description="Waits after successive connection errors, timeouts or 5xx; then give up.",
    )
    refused_backoff_s: list[float] = Field(
        [1.0, 3.0],
        description="Waits after refused connections from an endpoint that had answered (its server "
        "stopped): a quick restart is caught; then the run stops, saved.",
    )

    @model_validator(mode="before")
    @classmethod
    def _renamed(cls, data: object) -> object:
        """`request_timeout_s` (configs written before answers were streamed) is the stall timeout."""
        if isinstance(data, dict) and "request_timeout_s" in data:
            old = data["request_timeout_s"]
            data = {k: v for k, v in data.items() if k != "request_timeout_s"}
            data["stall_timeout_s"] = old  # the shipped llm.yaml no longer sets it: someone did
        return data

    @field_validator("max_output_tokens", mode="before")
    @classmethod
    def _one_cap(cls, value: object) -> object:
        """One number caps every kind of call; a mapping may name some kinds only."""
        if isinstance(value, int | str) and str(value).strip().isdigit():
            return dict.fromkeys(ANSWER_TOKENS, int(value))
        if isinstance(value, dict):
            return {**ANSWER_TOKENS, **value}
        return value

    @field_validator("max_output_tokens")
    @classmethod
    def _caps_positive(cls, value: dict[Phase, int]) -> dict[Phase, int]:
        if any(v < 16 for v in value.values()):
            raise ValueError("each cap must be at least 16 tokens")
        return value

    def answer_tokens(self, phase: Phase) -> int:
        return self.max_output_tokens.get(phase, ANSWER_TOKENS[phase])

    @property
    def endpoint(self) -> str:
        return self.base_url or "https://api.openai.com/v1"


def load_llm_settings(**overrides: Any) -> LLMSettings:
    """LLM settings with CLI overrides applied; a malformed value is a `ConfigError`."""
    try:
        return LLMSettings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'llm settings'}: {err['msg']}" for err in e.errors()
        )
        raise ConfigError(f"invalid LLM settings: {problems}") from None
