"""The progress line: what it says and what it leaves out."""

from __future__ import annotations

from investigator.front.live import Snapshot, StatusLines


def test_tokens_are_shown_only_when_a_model_spent_some() -> None:
    offline = Snapshot(iteration=3, max_iterations=15, elapsed_s=1.25, tokens=0, note="")
    llm = Snapshot(iteration=3, max_iterations=15, elapsed_s=1.25, tokens=12345, note="")
    assert "tokens" not in offline.text() and "tokens" not in offline.html()
    assert "12,345 tokens" in llm.text() and "12,345 tokens" in llm.html()
    assert "1.2s" in offline.text() and " ·  · " not in offline.html()


def test_while_the_model_answers_the_line_counts_its_tokens() -> None:
    """The first model call used to show "starting the kernel and loading the data..."."""
    lines = StatusLines(max_iterations=15)
    assert "loading the data" in lines.shown.text()
    line = lines.tokens(1234)
    assert line.endswith("waiting for the model (1,234 tokens so far)") and "loading" not in line
    assert lines.tokens(0).endswith("waiting for the model (0 tokens so far)")  # reading the prompt
