"""The one boundary to the model: an OpenAI-compatible endpoint, answers validated by `instructor`.

Structured output: in `auto` mode the client asks for the strictest mode the endpoint enforces and
moves to the next one when the server says it does not take it (`modes.py`), once per endpoint.
Answers are streamed (`stream.py`): the timeout is a stall, never the total time, and each answer is
capped at what its kind needs (`max_output_tokens` per phase); an answer that reaches its cap is
reported as cut off (`AnswerCutOff`), whatever finish_reason the server gave.

Retries live in exactly one layer each, so attempts never multiply:
- transport (here, `_send`): the `openai` client is built with `max_retries=0` and explicit
  timeouts; a stalled stream is never retried (the server may still be working on it; the step falls
  back); a 429 waits (Retry-After when given, else `rate_limit_backoff_s`), a connection error,
  timeout or 5xx waits `connection_backoff_s`, then gives up; a refused connection from an endpoint
  that had answered (its server stopped) waits only `refused_backoff_s`; a refused key or an
  account without quota fails at once. Each wait is announced through `on_wait` first.
- validation (instructor): `max_retries=max_validation_retries`; its retry loop only re-asks on
  parse and validation errors, feeding the error back. `_send` sits *inside* that loop, so one
  re-ask is one HTTP exchange, however many transport retries it took.

Tokens are counted per HTTP response from the API's `usage`, per phase, as `<phase>_in` and
`<phase>_out`. The API key is held by the `openai` client only: never logged or put in a message.
"""

from __future__ import annotations

import ipaddress
import logging
import re
import sys
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from functools import partial
from typing import Any, TypeVar
from urllib.parse import urlparse

import instructor
import openai
from instructor.core import IncompleteOutputException, InstructorRetryException
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

from investigator.errors import InvestigatorError

try:  # the HTTP client the openai package reads streams with: httpx2 from openai 3, httpx before
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]
from investigator.llm.errors import (
    AnswerCutOff,
    InvalidOutput,
    LLMAuthError,
    LLMRequestRejected,
    LLMUnavailable,
    LLMUnreachable,
    ModelStalled,
)
from investigator.llm.modes import ENFORCED, INSTRUCTOR_MODES, ModeRefused, Modes, refusal_names_the_mode
from investigator.llm.prompts import Prompt
from investigator.llm.settings import LLMSettings, Mode
from investigator.llm.stream import OnTokens, Partial, assemble
from investigator.llm.wait import OnWait, terminal_countdown
from investigator.run.context import estimate_tokens
from investigator.run.tokens import Phase, Usage

__all__ = ["LLMClient"]

T = TypeVar("T", bound=BaseModel)
OnNote = Callable[[str], None]
BILLING_CODES = {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}
NO_KEY = "no-key"  # local servers ignore the key, but the client insists on one

# instructor logs every failed attempt at ERROR; failures are reported through our errors instead,
# and not twice: its lines must not reach a handler a library put on the root logger either
logging.getLogger("instructor").addHandler(logging.NullHandler())
logging.getLogger("instructor").propagate = False


NEVER_ANSWERED_RETRIES = 1  # one quick retry before calling an endpoint misconfigured


class LLMClient:
    def __init__(
        self,
        llm: LLMSettings,
        on_wait: OnWait | None = None,
        on_tokens: OnTokens | None = None,
        on_note: OnNote | None = None,
    ):
        key = llm.api_key.get_secret_value() if llm.api_key else None
        if not key and not llm.base_url:
            raise LLMAuthError(
                "OPENAI_API_KEY is not set: export it, or point OPENAI_BASE_URL at an "
                "OpenAI-compatible server (vLLM, Ollama, a proxy) that needs no key"
            )
        _refuse_key_in_clear(llm.endpoint, bool(key))
        self.llm = llm
        self.usage = Usage()  # since the client was made; the planner takes differences
        self.on_wait = on_wait or terminal_countdown
        self.on_tokens: OnTokens = on_tokens or (lambda n: None)
        self.on_note: OnNote = on_note or _to_stderr
        self._key = key or ""
        self._openai = openai.OpenAI(
            api_key=key or NO_KEY,
            base_url=llm.base_url,
            max_retries=0,  # read: between two chunks of the stream, so a stall, not the total time
            timeout=openai.Timeout(llm.stall_timeout_s, connect=llm.connect_timeout_s),
        )
        self._host = urlparse(llm.endpoint).netloc or llm.endpoint
        self._answered = False  # an endpoint that never answered is misconfigured, not down
        self._answers = 0  # answers received for the current question (1 + its re-asks)
        self._usage_option: dict[str, Any] = {"stream_options": {"include_usage": True}}
        self.reasks = 0  # re-asks the last validated answer needed
        self.mode: Mode | None = None  # the structured-output mode of the last validated answer

    def ask(self, prompt: Prompt, model: type[T]) -> T:
        """One validated answer, or `InvalidOutput` once the re-asks are used up. In `auto` mode a
        mode the server refuses is remembered for the endpoint and the next one is tried; the first
        mode it answers in is said once (`on_note`) and kept for the endpoint."""
        endpoint, last = self.llm.endpoint, None
        for mode in Modes.candidates(endpoint, self.llm.mode):
            try:
                answer = self._ask(prompt, model, mode)
            except ModeRefused as e:
                if self.llm.mode != "auto":
                    raise LLMRequestRejected(
                        f"{self._host} does not take --llm-mode {mode} ({e}); drop --llm-mode (auto "
                        "finds what the server enforces) or choose another mode"
                    ) from None
                Modes.refused(endpoint, mode)
                self.on_note(
                    f"{self._host} does not take {mode} structured output ({e}): trying the next mode"
                )
                last = e
                continue
            finally:  # the server answered in this mode, valid or not: it takes it
                if self._answers:
                    self.mode = mode
                    if self.llm.mode == "auto" and Modes.settle(endpoint, mode):
                        self.on_note(f"structured output at {self._host}: {mode} ({ENFORCED[mode]})")
            return answer
        raise LLMRequestRejected(
            f"{self._host} refused every structured-output mode (last: {last}); check the server's "
            "version and the model name"
        )

    def _ask(self, prompt: Prompt, model: type[T], mode: Mode) -> T:
        schema = model.model_json_schema() if mode == "json_object_schema" else None
        send = partial(self._send, prompt.phase, mode, schema)
        create = instructor.patch(create=send, mode=INSTRUCTOR_MODES[mode])
        cap = self.llm.answer_tokens(prompt.phase)
        self._answers = 0
        try:
            answer: T = create(
                response_model=model,
                messages=[dict(m) for m in prompt.messages],
                max_retries=self.llm.max_validation_retries,
                strict=False,
                model=self.llm.model,
                temperature=self.llm.temperature,
                max_tokens=cap,
            )
        except InstructorRetryException as e:
            cause = e.__cause__
            if isinstance(cause, InvestigatorError | ModeRefused):
                raise cause from None
            raise InvalidOutput(
                f"invalid answer after {e.n_attempts} attempt(s): {_describe(cause or e)}"
            ) from None
        except IncompleteOutputException:
            raise AnswerCutOff(_cut_off(cap, prompt.phase)) from None
        self.reasks = max(self._answers - 1, 0)
        return answer

    # transport ----------------------------------------------------------------------------------
    def _send(self, phase: Phase, mode: Mode, schema: dict[str, Any] | None, **kwargs: Any) -> ChatCompletion:
        """One streamed HTTP exchange, retried here and only here on rate limits and transient
        failures; a stall is never retried."""
        if schema is not None:  # llama.cpp constrains json_object to this schema with a grammar
            kwargs["response_format"] = {
                **(kwargs.get("response_format") or {"type": "json_object"}),
                "schema": schema,
            }
        rate_limited = transient = refused = 0
        while True:
            got = Partial()
            try:
                self.on_tokens(0)
                stream = self._openai.chat.completions.create(**kwargs, stream=True, **self._usage_option)
                with stream:
                    completion = assemble(stream, self.on_tokens, got)
            except openai.APIStatusError as e:
                self._answered = True  # it answered, if only with an error: failures from here are outages
                if refusal_names_the_mode(mode, e.status_code, self._detail(e)):
                    raise ModeRefused(mode, e.status_code, self._detail(e)) from None
                if self._usage_option and "stream_options" in self._detail(e):  # usage is estimated then
                    self._usage_option = {}
                    continue
                rate_limited, transient = self._status(e, rate_limited, transient)
            except (openai.APITimeoutError, httpx.TimeoutException) as e:
                if not isinstance(e.__cause__ or e, httpx.ConnectTimeout | httpx.PoolTimeout):
                    # the prompt was read and `got.tokens` written: they count against the budget
                    prompt_tokens = estimate_tokens(str(kwargs.get("messages", "")))
                    self.usage = self.usage.counted(phase, prompt_tokens, got.tokens)
                    raise self._stalled(got) from None  # it may still be working on it: never retried
                transient = self._transient(
                    transient, f"connecting took over {self.llm.connect_timeout_s:g}s"
                )
            except openai.APIConnectionError as e:
                what = f"connection failed ({_first_line(e.__cause__ or e)})"
                if not self._answered and transient >= NEVER_ANSWERED_RETRIES:
                    raise LLMUnreachable(
                        f"no OpenAI-compatible endpoint answers at {self.llm.endpoint}: {what}; check "
                        "OPENAI_BASE_URL (unset it for OpenAI itself) and that the server is running"
                    ) from None
                if self._answered and _refused(e):  # its server stopped: minutes of backoff would not help
                    refused = self._gone(refused)
                    continue
                transient = self._transient(transient, what)
            except (httpx.TransportError, openai.APIError) as e:  # the stream broke: the server let go of it
                self._answered = True
                transient = self._transient(
                    transient, f"the answer broke off ({self._scrub(_first_line(e))})"
                )
            else:
                self._answered = True
                self._count(phase, kwargs, completion, got)
                self._answers += 1
                cap = int(kwargs.get("max_tokens") or 0)
                out = completion.usage.completion_tokens if completion.usage is not None else got.tokens
                if completion.choices and (
                    completion.choices[0].finish_reason == "length" or (cap and out >= cap)
                ):
                    raise AnswerCutOff(_cut_off(cap, phase))
                return completion

    def _stalled(self, got: Partial) -> ModelStalled:
        wait = f"{self.llm.stall_timeout_s:g}s"
        if got.tokens:
            what = f"the model stopped sending tokens for {wait} after {got.tokens}"
        else:
            what = f"no token came from {self._host} within {wait} (reading the prompt, or stuck)"
        return ModelStalled(
            f"{what}; the request was abandoned, not retried (raise stall_timeout_s for a slow model)"
        )

    def _status(self, e: openai.APIStatusError, rate_limited: int, transient: int) -> tuple[int, int]:
        """An HTTP error answer: raise what retrying cannot fix; else wait and count the attempt."""
        if isinstance(e, openai.AuthenticationError | openai.PermissionDeniedError):
            raise LLMAuthError(
                f"{self._host} refused the API key (HTTP {e.status_code}: {self._detail(e)}); "
                "set OPENAI_API_KEY to a valid key for this endpoint"
            ) from None
        if isinstance(e, openai.RateLimitError):
            if _billing(e):
                raise self._billing_error(e) from None
            if rate_limited >= self.llm.rate_limit_max_retries:
                raise LLMUnavailable(
                    f"{self._host} kept rate-limiting after {rate_limited} waits", then="resume it later with"
                ) from None
            self._wait(self._rate_delay(e, rate_limited), f"rate limited by {self._host} (HTTP 429)")
            return rate_limited + 1, transient
        if e.status_code == 402:
            raise self._billing_error(e) from None
        if e.status_code < 500 and e.status_code != 408:
            raise LLMRequestRejected(
                f"{self._host} rejected the request (HTTP {e.status_code}: {self._detail(e)}); "
                f"check the model name ({self.llm.model!r})"
            ) from None
        return rate_limited, self._transient(
            transient, f"server error (HTTP {e.status_code}: {self._detail(e)})"
        )

    def _transient(self, failures: int, what: str) -> int:
        tiers = self.llm.connection_backoff_s
        if failures >= len(tiers):
            raise LLMUnavailable(
                f"could not get an answer from {self._host} after {failures + 1} attempts: {what}",
                then="resume it later with",
            )
        self._wait(min(tiers[failures], self.llm.max_wait_s), f"{self._host}: {what}")
        return failures + 1

    def _gone(self, refusals: int) -> int:
        """Connections refused by an endpoint that had answered: a short wait for a restart, then
        stop (the run is saved), not the long backoff meant for an overloaded server."""
        tiers = self.llm.refused_backoff_s
        if refusals >= len(tiers):
            raise LLMUnavailable(
                f"{self._host} answered earlier in this run but now refuses connections (its server "
                f"stopped?) after {refusals + 1} attempts",
                then="start the server again, then",
            )
        self._wait(min(tiers[refusals], self.llm.max_wait_s), f"{self._host}: connection refused")
        return refusals + 1

    def _rate_delay(self, e: openai.RateLimitError, waits: int) -> float:
        tiers = self.llm.rate_limit_backoff_s
        delay = _retry_after(e.response.headers)
        if delay is None:
            delay = tiers[min(waits, len(tiers) - 1)]
        return min(max(delay, 0.0), self.llm.max_wait_s)

    def _wait(self, seconds: float, reason: str) -> None:
        """Announce, then sleep whatever the announcement (a countdown, say) did not."""
        started = time.monotonic()
        self.on_wait(seconds, reason)
        remaining = seconds - (time.monotonic() - started)
        if remaining > 0:
            time.sleep(remaining)

    def _count(self, phase: Phase, kwargs: dict[str, Any], completion: ChatCompletion, got: Partial) -> None:
        usage = completion.usage
        if usage is not None:
            tokens_in, tokens_out = usage.prompt_tokens, usage.completion_tokens
        else:  # some servers omit usage: estimate, so the budget still holds
            tokens_in = estimate_tokens(str(kwargs.get("messages", "")))
            tokens_out = got.tokens or estimate_tokens(completion.model_dump_json(include={"choices"}))
        self.usage = self.usage.counted(phase, int(tokens_in or 0), int(tokens_out or 0))

    def _billing_error(self, e: openai.APIStatusError) -> LLMAuthError:
        return LLMAuthError(
            f"{self._host} says the account cannot pay for requests (HTTP {e.status_code}: "
            f"{self._detail(e)}); check the plan and billing of the key in OPENAI_API_KEY"
        )

    def _detail(self, e: openai.APIStatusError) -> str:
        """The server's own words, one line, the key scrubbed."""
        body = e.body if isinstance(e.body, dict) else {}
        return self._scrub(server_words(str(body.get("message") or e.message)))

    def _scrub(self, text: str) -> str:
        if self._key:
            text = text.replace(self._key, "***")
        return _SECRET.sub("***", text)[:300]


_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{8,}|Bearer\s+\S+|(?i:api[_-]?key)[=:]\s*\S+)")


def _cut_off(cap: int, phase: Phase) -> str:
    return (
        f"the model's answer was cut off at {cap} tokens (the cap for a {phase} answer): it wrote "
        "more than the answer needs; a larger model, or a larger max_output_tokens, may help"
    )


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _billing(e: openai.APIStatusError) -> bool:
    body = e.body if isinstance(e.body, dict) else {}
    return bool({str(e.code), str(body.get("type"))} & BILLING_CODES)


def _refused(e: BaseException) -> bool:
    """Whether a connection error is a refusal (nothing listens at the endpoint's port)."""
    seen: BaseException | None = e
    for _ in range(8):  # openai's error wraps httpx's, which wraps the socket's
        if seen is None:
            return False
        if isinstance(seen, ConnectionRefusedError) or "Connection refused" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date), if given."""
    try:
        if headers.get("retry-after-ms"):
            return float(headers["retry-after-ms"]) / 1000
        value = headers.get("retry-after")
        if not value:
            return None
        try:
            return float(value)
        except ValueError:
            return parsedate_to_datetime(value).timestamp() - time.time()
    except (TypeError, ValueError):
        return None


def _describe(e: BaseException) -> str:
    """A validation error as `field: message; ...`, anything else as its first line."""
    if isinstance(e, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'answer'}: {err['msg'].removeprefix('Value error, ')}"
            for err in e.errors()[:3]
        )
    return f"{type(e).__name__}: {_first_line(e)}"


_VALIDATION = re.compile(r"""'loc': \(([^)]*)\), 'msg': (?:"([^"]*)"|'([^']*)')""")


def server_words(message: str) -> str:
    """A server's error message on one line. A pydantic validation error (llama-cpp-python's
    server answers `json_schema` with one, as HTTP 500) is its messages with where they point,
    `body.response_format.type: Input should be 'text' or 'json_object'`, not its first line
    ("1 validation error:"); a traceback the server appends is left out."""
    found = _VALIDATION.findall(message)
    if found:
        parts = []
        for loc, double, single in found:
            where = ".".join(p.strip(" '\"") for p in loc.split(",") if p.strip(" '\""))
            parts.append(f"{where}: {double or single}" if where else double or single)
        return "; ".join(parts)
    head = re.split(r"\n\s*(?:File \"|Traceback)", message)[0]
    return " ".join(head.split()) or message.strip()


def _first_line(e: object) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def _refuse_key_in_clear(endpoint: str, has_key: bool) -> None:
    """The key goes only over TLS, or to this machine: plain http elsewhere would hand it to anyone
    on the path."""
    url = urlparse(endpoint)
    if not has_key or url.scheme != "http":
        return
    host = (url.hostname or "").lower()
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise LLMAuthError(
            f"refusing to send OPENAI_API_KEY over plain http to {url.netloc}: use an https:// "
            "OPENAI_BASE_URL, or unset OPENAI_API_KEY for a server that needs no key"
        )
