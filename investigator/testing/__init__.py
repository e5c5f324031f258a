"""Fakes for the seams that need a real counterpart in tests: an OpenAI-compatible server."""

from investigator.testing.fake_openai import FakeOpenAI, Reply, Seen, answer, drop, fault, hang, malformed

__all__ = ["FakeOpenAI", "Reply", "Seen", "answer", "drop", "fault", "hang", "malformed"]
