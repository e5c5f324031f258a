"""A scripted OpenAI-compatible chat-completions server, over real HTTP, for tests and dry runs.

It answers `POST /v1/chat/completions` the way the OpenAI API does: a tool call when the request
offers tools, JSON content otherwise, always with `usage`; streamed as server-sent events when the
request says `stream: true` (one token, four characters, per event, `token_delay` apart), and cut at
the request's `max_tokens` (finish_reason "length"). Answers come from a script, consumed in
order; each `Reply` may be aimed at one response model (the tool or schema name, e.g. "NextStep"), and
may be a fault instead: any HTTP status with headers (429 + Retry-After, 500, 401), a delay longer
than the client's timeout, malformed JSON, or JSON that breaks the schema. When nothing scripted
fits, the `default` responder answers, else a 400 saying what was asked.

`FakeOpenAI(llama_cpp=True)` behaves as llama.cpp's server does: `response_format` of type
`json_schema` is refused with HTTP 500 ("Input should be 'text' or 'json_object'"), `json_object`
takes a `schema`, and an answer cut at `max_tokens` in a tool call reports finish_reason
"tool_calls". `stall(after, seconds)` streams `after` tokens, then sends nothing for `seconds`.
`server.busy_max` is the most requests it was ever working on at once.

    with FakeOpenAI() as server:
        server.script(fault(429, retry_after=0.01), answer({"type": "ANALYZE", ...}, to="NextStep"))
        LLMSettings(base_url=server.url, api_key="sk-test")
        ...
        server.requests[0].headers["authorization"]
"""

from __future__ import annotations

import json
import re
import select
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from typing import Any

__all__ = [
    "LLAMA_CPP_REFUSAL",
    "FakeOpenAI",
    "Reply",
    "Seen",
    "answer",
    "fault",
    "hang",
    "malformed",
    "stall",
]

LLAMA_CPP_REFUSAL = "Input should be 'text' or 'json_object'"
# the whole message llama-cpp-python 0.3.36's server sends with its HTTP 500 (a pydantic error and
# a piece of traceback): the first line alone says nothing about the mode
LLAMA_CPP_REFUSAL_BODY = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    f"'msg': \"{LLAMA_CPP_REFUSAL}\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/srv/llama_cpp/server/app.py\", "
    "line 376, in create_chat_completion\n    POST /v1/chat/completions"
)
CHARS_PER_TOKEN = 4


@dataclass
class Reply:
    """One scripted answer. `body` is sent as JSON; `raw` is sent as-is (to break the JSON)."""

    body: Any = None
    raw: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: dict[str, Any] | None = None
    delay: float = 0.0
    to: str | None = None
    usage: tuple[int, int] | None = None
    stall_after: int | None = None  # streamed: tokens sent before the stream goes silent for `delay`


def answer(body: Any, to: str | None = None, usage: tuple[int, int] | None = None) -> Reply:
    return Reply(body=body, to=to, usage=usage)


def malformed(raw: str = '{"type": "ANALYZE", "rationale": ', to: str | None = None) -> Reply:
    return Reply(raw=raw, to=to)


def fault(
    status: int,
    message: str = "scripted fault",
    *,
    retry_after: float | None = None,
    retry_after_ms: float | None = None,
    code: str | None = None,
    to: str | None = None,
) -> Reply:
    headers = {}
    if retry_after is not None:
        headers["Retry-After"] = f"{retry_after:g}"
    if retry_after_ms is not None:
        headers["retry-after-ms"] = f"{retry_after_ms:g}"
    error = {"message": message, "type": code or "error", "code": code}
    return Reply(status=status, headers=headers, error=error, to=to)


def drop(to: str | None = None) -> Reply:
    """Close the connection without answering: to the client, a connection failure."""
    return Reply(status=0, to=to)


def hang(seconds: float, to: str | None = None) -> Reply:
    """Answer only after `seconds` (a 504 then): longer than the client's timeout, it is a timeout."""
    return Reply(status=504, error={"message": "too late"}, delay=seconds, to=to)


def stall(after: int, seconds: float, body: Any = None, to: str | None = None) -> Reply:
    """Stream `after` tokens of the answer, then nothing for `seconds` (then the rest)."""
    return Reply(
        body=body if body is not None else {"stalled": "x" * 400}, delay=seconds, stall_after=after, to=to
    )


@dataclass
class Seen:
    """One request as received."""

    name: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def text(self) -> str:
        """Every message's text, joined: what the model would read."""
        parts = []
        for m in self.body.get("messages", []):
            content = m.get("content")
            parts.append(content if isinstance(content, str) else json.dumps(content))
        return "\n".join(p for p in parts if p)


Responder = Callable[[Seen], Reply]


class FakeOpenAI:
    def __init__(
        self,
        default: Responder | None = None,
        model: str = "fake-model",
        *,
        llama_cpp: bool = False,
        token_delay: float = 0.0,
    ):
        self.default, self.model = default, model
        self.llama_cpp, self.token_delay = llama_cpp, token_delay
        self.requests: list[Seen] = []
        self.busy = self.busy_max = 0  # requests being worked on now, and the most at once
        self._script: list[Reply] = []
        self._lock = threading.Lock()
        self._ids = count(1)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._script.extend(replies)

    @property
    def pending(self) -> list[Reply]:
        """Scripted replies not yet used."""
        with self._lock:
            return list(self._script)

    def calls(self, name: str | None = None) -> list[Seen]:
        return [r for r in self.requests if name is None or r.name == name]

    # serving -------------------------------------------------------------------------------------
    def respond(self, seen: Seen) -> tuple[Reply, dict[str, Any]]:
        """The reply to a request and the completion it makes (an error body for a fault)."""
        with self._lock:
            self.requests.append(seen)
            fmt = seen.body.get("response_format") or {}
            if self.llama_cpp and fmt.get("type") not in (None, "text", "json_object"):
                error = {"message": LLAMA_CPP_REFUSAL_BODY, "type": "internal_server_error", "param": None}
                refusal = Reply(status=500, error=error)
                return refusal, {"error": refusal.error}
            reply = next((r for r in self._script if r.to in (None, seen.name)), None)
            if reply is not None:
                self._script.remove(reply)
        if reply is None and self.default is not None:
            reply = self.default(seen)
        if reply is None:
            reply = fault(400, f"fake server: nothing scripted for {seen.name or 'this request'}")
        if reply.status != 200:
            return reply, {"error": reply.error or {"message": "error"}}
        return reply, self._completion(seen, reply)

    def _completion(self, seen: Seen, reply: Reply) -> dict[str, Any]:
        text = reply.raw if reply.raw is not None else json.dumps(reply.body)
        cap = int(seen.body.get("max_tokens") or seen.body.get("max_completion_tokens") or 0)
        cut = bool(cap) and len(text) > cap * CHARS_PER_TOKEN
        if cut:
            text = text[: cap * CHARS_PER_TOKEN]
        n = next(self._ids)
        if seen.body.get("tools"):
            message: dict[str, Any] = {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": f"call_{n}",
                        "type": "function",
                        "function": {"name": seen.name, "arguments": text},
                    }
                ],
            }
            finish = "length" if cut and not self.llama_cpp else "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": text}, "length" if cut else "stop"
        tokens_in, tokens_out = reply.usage or ((len(seen.text) + 3) // 4, (len(text) + 3) // 4)
        return {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": seen.body.get("model", self.model),
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {
                "prompt_tokens": tokens_in,
                "completion_tokens": tokens_out,
                "total_tokens": tokens_in + tokens_out,
            },
        }


def requested_model(body: dict[str, Any]) -> str:
    """The response model a request asks for: its forced tool, its JSON schema's name, or the
    schema title instructor put in the system message (JSON mode)."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        return str(choice.get("function", {}).get("name", ""))
    tools = body.get("tools") or []
    if tools:
        return str(tools[0].get("function", {}).get("name", ""))
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return str(fmt.get("json_schema", {}).get("name", ""))
    if isinstance(fmt.get("schema"), dict) and fmt["schema"].get("title"):  # llama.cpp's json_object
        return str(fmt["schema"]["title"])
    for m in body.get("messages", []):
        titles = re.findall(r'"title":\s*"(\w+)"', str(m.get("content")))
        if titles:  # the top-level title comes last in a pydantic JSON schema
            return str(titles[-1])
    return ""


def _handler(server: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except json.JSONDecodeError:
                body = {}
            if not self.path.rstrip("/").endswith("/chat/completions"):
                self._send(404, {}, {"error": {"message": f"fake server has no {self.path}"}})
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            with server._lock:
                server.busy += 1
                server.busy_max = max(server.busy_max, server.busy)
            try:
                reply, payload = server.respond(Seen(requested_model(body), body, headers))
                if reply.status == 200 and body.get("stream"):
                    self._stream(
                        reply, payload, bool((body.get("stream_options") or {}).get("include_usage"))
                    )
                    return
                if reply.delay and not self._idle(reply.delay):
                    return  # the client hung up: the server drops the request
                if reply.status == 0:  # drop: no answer at all
                    self.close_connection = True
                    return
                self._send(reply.status, reply.headers, payload)
            finally:
                with server._lock:
                    server.busy -= 1

        def _stream(self, reply: Reply, completion: dict[str, Any], usage: bool) -> None:
            """The completion as server-sent events, one token a chunk; a client that hangs up stops
            the generation (as llama.cpp's server does)."""
            choice = completion["choices"][0]
            message = choice["message"]
            calls = message.get("tool_calls")
            text = calls[0]["function"]["arguments"] if calls else message["content"]
            base = {k: completion[k] for k in ("id", "created", "model")} | {
                "object": "chat.completion.chunk"
            }

            def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
                return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

            first: dict[str, Any] = {"role": "assistant"}
            if calls:
                call = calls[0]
                first["tool_calls"] = [
                    {"index": 0, "id": call["id"], "type": "function",
                     "function": {"name": call["function"]["name"], "arguments": ""}}
                ]  # fmt: skip
            try:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                for k, v in reply.headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.close_connection = True
                self._event(chunk(first))
                tokens = [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]
                for i, token in enumerate(tokens):
                    if reply.stall_after is not None and i == reply.stall_after:
                        if not self._idle(reply.delay):
                            return  # the client hung up during the stall: the generation stops
                    elif server.token_delay:
                        time.sleep(server.token_delay)
                    if calls:
                        self._event(chunk({"tool_calls": [{"index": 0, "function": {"arguments": token}}]}))
                    else:
                        self._event(chunk({"content": token}))
                self._event(chunk({}, choice["finish_reason"]))
                if usage:
                    self._event({**base, "choices": [], "usage": completion["usage"]})
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client hung up: the generation stops here

        def _idle(self, seconds: float) -> bool:
            """Wait `seconds` while the client stays connected; False as soon as it hangs up."""
            deadline = time.monotonic() + seconds
            while (left := deadline - time.monotonic()) > 0:
                try:
                    readable, _, _ = select.select([self.connection], [], [], min(left, 0.05))
                    gone = bool(readable) and not self.connection.recv(1, socket.MSG_PEEK)
                except OSError:
                    gone = True
                if gone:
                    self.close_connection = True
                    return False
            return True

        def _event(self, data: dict[str, Any]) -> None:
            self.wfile.write(b"data: " + json.dumps(data).encode() + b"\n\n")
            self.wfile.flush()

        def do_GET(self) -> None:
            if self.path.rstrip("/").endswith("/models"):
                self._send(200, {}, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
            else:
                self._send(404, {}, {"error": {"message": f"fake server has no {self.path}"}})

        def _send(self, status: int, headers: dict[str, str], payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test): nothing to do

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler
