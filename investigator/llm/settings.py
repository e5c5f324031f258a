"""LLM planner settings: defaults in `configs/llm.yaml`, overridden by `INVESTIGATOR_LLM_*` env vars
(and the standard `OPENAI_API_KEY` / `OPENAI_BASE_URL`), overridden by keyword arguments.

The API key is a `SecretStr`: it prints as `**********` and is never written anywhere.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, SecretStr, ValidationError
from pydantic_settings import SettingsConfigDict

from investigator.config import YamlSettings
from investigator.errors import ConfigError

Mode = Literal["tools", "json", "json_schema", "md_json"]


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
    mode: Mode = Field("tools", description="How structured output is asked for: tool calls or JSON.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature; 0 for repeatable runs.")
    max_output_tokens: int = Field(1500, ge=64, description="Upper bound on each answer's length.")
    request_timeout_s: float = Field(90.0, gt=0, description="One HTTP request gives up after this long.")
    connect_timeout_s: float = Field(10.0, gt=0, description="Opening a connection gives up after this long.")
    max_validation_retries: int = Field(
        2, ge=0, description="Re-asks with the validation error fed back before the offline fallback."
    )
    reflect_every: int = Field(5, ge=0, description="Self-assessment every N iterations; 0 turns it off.")
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
