"""The LLM boundary: settings, prompts, response schemas and the one client that calls the model."""

from investigator.llm.client import LLMClient
from investigator.llm.errors import (
    InvalidOutput,
    LLMAuthError,
    LLMRequestRejected,
    LLMUnavailable,
    LLMUnreachable,
    PromptTooLarge,
)
from investigator.llm.settings import LLMSettings, load_llm_settings
from investigator.llm.wait import OnWait, countdown, terminal_countdown

__all__ = [
    "InvalidOutput",
    "LLMAuthError",
    "LLMClient",
    "LLMRequestRejected",
    "LLMSettings",
    "LLMUnavailable",
    "LLMUnreachable",
    "OnWait",
    "PromptTooLarge",
    "countdown",
    "load_llm_settings",
    "terminal_countdown",
]
