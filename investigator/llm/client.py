"""The one boundary to the model: an OpenAI-compatible endpoint, answers validated by `instructor`.

Retries live in exactly one layer each, so attempts never multiply:
- transport (here, `_send`): the `openai` client is built with `max_retries=0` and explicit
  timeouts; a 429 waits (Retry-After when given, else `rate_limit_backoff_s`), a connection error,
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
import time
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
from investigator.llm.errors import (
    InvalidOutput,
    LLMAuthError,
    LLMRequestRejected,
    LLMUnavailable,
    LLMUnreachable,
)
from investigator.llm.prompts import Prompt
from investigator.llm.settings import LLMSettings
from investigator.llm.wait import OnWait, terminal_countdown
from investigator.run.context import estimate_tokens
from investigator.run.tokens import Phase, Usage

__all__ = ["LLMClient"]

T = TypeVar("T", bound=BaseModel)
MODES = {
    "tools": instructor.Mode.TOOLS,
    "json": instructor.Mode.JSON,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "md_json": instructor.Mode.MD_JSON,
}
BILLING_CODES = {"insufficient_quota", "billing_hard_limit_reached", "billing_not_active"}
NO_KEY = "no-key"  # local servers ignore the key, but the client insists on one

# instructor logs every failed attempt at ERROR; failures are reported through our errors instead,
# and not twice: its lines must not reach a handler a library put on the root logger either
logging.getLogger("instructor").addHandler(logging.NullHandler())
logging.getLogger("instructor").propagate = False


NEVER_ANSWERED_RETRIES = 1  # one quick retry before calling an endpoint misconfigured


class LLMClient:
    def __init__(self, llm: LLMSettings, on_wait: OnWait | None = None):
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
        self._key = key or ""
        self._openai = openai.OpenAI(
            api_key=key or NO_KEY,
            base_url=llm.base_url,
            max_retries=0,
            timeout=openai.Timeout(llm.request_timeout_s, connect=llm.connect_timeout_s),
        )
        self._host = urlparse(llm.endpoint).netloc or llm.endpoint
        self._answered = False  # an endpoint that never answered is misconfigured, not down

    def ask(self, prompt: Prompt, model: type[T]) -> T:
        """One validated answer, or `InvalidOutput` once the re-asks are used up."""
        create = instructor.patch(create=partial(self._send, prompt.phase), mode=MODES[self.llm.mode])
        try:
            answer: T = create(
                response_model=model,
                messages=[dict(m) for m in prompt.messages],
                max_retries=self.llm.max_validation_retries,
                strict=False,
                model=self.llm.model,
                temperature=self.llm.temperature,
                max_tokens=self.llm.max_output_tokens,
            )
        except InstructorRetryException as e:
            cause = e.__cause__
            if isinstance(cause, InvestigatorError):
                raise cause from None
            raise InvalidOutput(
                f"invalid answer after {e.n_attempts} attempt(s): {_describe(cause or e)}"
            ) from None
        except IncompleteOutputException:
            raise InvalidOutput(
                f"the answer was cut at max_output_tokens ({self.llm.max_output_tokens})"
            ) from None
        return answer

    # transport ----------------------------------------------------------------------------------
    def _send(self, phase: Phase, **kwargs: Any) -> ChatCompletion:
        """One HTTP exchange, retried here and only here on rate limits and transient failures."""
        rate_limited = transient = refused = 0
        while True:
            try:
                completion: ChatCompletion = self._openai.chat.completions.create(**kwargs)
            except openai.APIStatusError as e:
                self._answered = True  # it answered, if only with an error: failures from here are outages
                rate_limited, transient = self._status(e, rate_limited, transient)
            except openai.APITimeoutError:
                transient = self._transient(transient, f"no answer within {self.llm.request_timeout_s:g}s")
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
            else:
                self._answered = True
                self._count(phase, kwargs, completion)
                return completion

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
                f"check the model name ({self.llm.model!r}) and, if the server has no tool "
                "calls, set INVESTIGATOR_LLM_MODE=json"
            ) from None
        return rate_limited, self._transient(transient, f"server error (HTTP {e.status_code})")

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

    def _count(self, phase: Phase, kwargs: dict[str, Any], completion: ChatCompletion) -> None:
        usage = completion.usage
        if usage is not None:
            tokens_in, tokens_out = usage.prompt_tokens, usage.completion_tokens
        else:  # some servers omit usage: estimate, so the budget still holds
            tokens_in = estimate_tokens(str(kwargs.get("messages", "")))
            tokens_out = estimate_tokens(completion.model_dump_json(include={"choices"}))
        self.usage = self.usage.counted(phase, int(tokens_in or 0), int(tokens_out or 0))

    def _billing_error(self, e: openai.APIStatusError) -> LLMAuthError:
        return LLMAuthError(
            f"{self._host} says the account cannot pay for requests (HTTP {e.status_code}: "
            f"{self._detail(e)}); check the plan and billing of the key in OPENAI_API_KEY"
        )

    def _detail(self, e: openai.APIStatusError) -> str:
        body = e.body if isinstance(e.body, dict) else {}
        text = str(body.get("message") or e.message)
        if self._key:
            text = text.replace(self._key, "***")
        return _first_line(text)[:300]


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
