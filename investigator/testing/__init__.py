"""Fakes for the seams that need a real counterpart in tests: an OpenAI-compatible server, and a
planner that plays a script (`investigator.testing.scripted`, imported on its own: it loads the loop)."""

from investigator.testing.fake_openai import (
    LLAMA_CPP_REFUSAL,
    FakeOpenAI,
    Reply,
    Seen,
    answer,
    drop,
    fault,
    hang,
    malformed,
    stall,
)

__all__ = [
    "LLAMA_CPP_REFUSAL",
    "FakeOpenAI",
    "Reply",
    "Seen",
    "answer",
    "drop",
    "fault",
    "hang",
    "malformed",
    "stall",
]
