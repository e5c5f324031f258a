"""An answer read as a stream, put back together as the `ChatCompletion` instructor validates.

Streaming is what makes a slow local model usable: the timeout is a stall (no token for
`stall_timeout_s`, the HTTP client's read timeout between two chunks), not the total time, so a
model writing 3 tokens a second is never abandoned mid-answer; and a client that gives up closes the
connection, which stops the generation on llama.cpp's and vLLM's servers instead of leaving it to
compute while the next request queues behind it. Tokens so far are reported as they come.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["OnTokens", "assemble"]

OnTokens = Callable[[int], None]
REPORT_EVERY_S = 0.25  # how often the tokens-so-far count is passed on


class Partial:
    """What the chunks said so far."""

    def __init__(self) -> None:
        self.id, self.model, self.created = "", "", 0
        self.content: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, int] | None = None
        self.tokens = 0  # chunks that carried text: one token each on llama.cpp, vLLM and Ollama

    def add(self, chunk: ChatCompletionChunk) -> None:
        self.id, self.model, self.created = chunk.id or self.id, chunk.model or self.model, chunk.created
        if chunk.usage is not None:
            self.usage = {
                "prompt_tokens": chunk.usage.prompt_tokens,
                "completion_tokens": chunk.usage.completion_tokens,
                "total_tokens": chunk.usage.total_tokens,
            }
        for choice in chunk.choices[:1]:
            delta = choice.delta
            if delta.content:
                self.content.append(delta.content)
                self.tokens += 1
            for call in delta.tool_calls or []:
                seen = self.calls.setdefault(call.index, {"id": "", "name": "", "arguments": ""})
                seen["id"] = call.id or seen["id"]
                if call.function is not None:
                    seen["name"] += call.function.name or ""
                    if call.function.arguments:
                        seen["arguments"] += call.function.arguments
                        self.tokens += 1
            self.finish = choice.finish_reason or self.finish

    def completion(self) -> ChatCompletion:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content) or None}
        if self.calls:
            message["tool_calls"] = [
                {"id": c["id"] or f"call_{i}", "type": "function",
                 "function": {"name": c["name"], "arguments": c["arguments"]}}
                for i, c in sorted(self.calls.items())
            ]  # fmt: skip
        return ChatCompletion.model_validate(
            {
                "id": self.id or "stream",
                "object": "chat.completion",
                "created": self.created,
                "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": self.finish or "stop"}],
                "usage": self.usage,
            }
        )


def assemble(chunks: Iterable[ChatCompletionChunk], on_tokens: OnTokens, partial: Partial) -> ChatCompletion:
    """Read every chunk into `partial` (so a caller that catches a stall knows how far it got),
    reporting the tokens so far at most every `REPORT_EVERY_S`."""
    reported = time.monotonic()
    for chunk in chunks:
        partial.add(chunk)
        if time.monotonic() - reported >= REPORT_EVERY_S:
            on_tokens(partial.tokens)
            reported = time.monotonic()
    on_tokens(partial.tokens)
    return partial.completion()
