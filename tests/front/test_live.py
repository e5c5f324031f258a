"""The progress line: what it says and what it leaves out."""

from __future__ import annotations

from investigator.front.live import Snapshot


def test_tokens_are_shown_only_when_a_model_spent_some() -> None:
    offline = Snapshot(iteration=3, max_iterations=15, elapsed_s=1.25, tokens=0, note="")
    llm = Snapshot(iteration=3, max_iterations=15, elapsed_s=1.25, tokens=12345, note="")
    assert "tokens" not in offline.text() and "tokens" not in offline.html()
    assert "12,345 tokens" in llm.text() and "12,345 tokens" in llm.html()
    assert "1.2s" in offline.text() and " ·  · " not in offline.html()
