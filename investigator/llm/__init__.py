"""The LLM boundary: settings, prompts, response schemas and the one client that calls the model."""

from .client import LLMClient
from .errors import InvalidOutput, LLMAuthError, LLMRequestRejected, LLMUnavailable, PromptTooLarge
from .settings import LLMSettings, load_llm_settings
from .wait import OnWait, countdown, terminal_countdown

__all__ = [
    "InvalidOutput",
    "LLMAuthError",
    "LLMClient",
    "LLMRequestRejected",
    "LLMSettings",
    "LLMUnavailable",
    "OnWait",
    "PromptTooLarge",
    "countdown",
    "load_llm_settings",
    "terminal_countdown",
]
