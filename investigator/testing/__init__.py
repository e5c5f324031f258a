"""Fakes for the seams (`investigator.protocols`), for tests: an OpenAI-compatible server
(`fake_openai`), a data source, an embedder, a notifier and the runs the MCP tools start
(`fakes`), and a planner that plays a script (`investigator.testing.scripted`, imported on its
own: it loads the loop). The fake kernel is `investigator.kernels.inprocess.InProcessKernel`."""

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
from investigator.testing.fakes import FakeEmbedder, FakeNotifier, FakeRuns, FrameSource

__all__ = [
    "LLAMA_CPP_REFUSAL",
    "FakeEmbedder",
    "FakeNotifier",
    "FakeOpenAI",
    "FakeRuns",
    "FrameSource",
    "Reply",
    "Seen",
    "answer",
    "drop",
    "fault",
    "hang",
    "malformed",
    "stall",
]
