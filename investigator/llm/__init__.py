"""The LLM boundary: settings, prompts, response schemas and the one client that calls the model."""

from investigator.llm.client import LLMClient
from investigator.llm.errors import (
    AnswerCutOff,
    InvalidOutput,
    LLMAuthError,
    LLMRequestRejected,
    LLMUnavailable,
    LLMUnreachable,
    ModelStalled,
    PromptTooLarge,
)
from investigator.llm.settings import LLMSettings, load_llm_settings
from investigator.llm.wait import OnWait, countdown, terminal_countdown

__all__ = [
    "AnswerCutOff",
    "InvalidOutput",
    "LLMAuthError",
    "LLMClient",
    "LLMRequestRejected",
    "LLMSettings",
    "LLMUnavailable",
    "LLMUnreachable",
    "ModelStalled",
    "OnWait",
    "PromptTooLarge",
    "countdown",
    "load_llm_settings",
    "terminal_countdown",
]
