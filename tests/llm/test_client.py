"""The LLM boundary over real HTTP: validation re-asks, backoff, fast failures, accounting, budget."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable

import pytest

from investigator.errors import UserError
from investigator.llm import (
    InvalidOutput,
    LLMAuthError,
    LLMClient,
    LLMRequestRejected,
    LLMSettings,
    LLMUnavailable,
    LLMUnreachable,
    ModelStalled,
    PromptTooLarge,
    countdown,
)
from investigator.llm.prompts import build, fixed_tokens, library_reference
from investigator.llm.schemas import NextStep, bound
from investigator.run.tokens import Usage
from investigator.testing import FakeOpenAI, answer, drop, fault, hang, malformed

GOOD = {
    "type": "ANALYZE",
    "rationale": "test it",
    "hypothesis_id": "H1",
    "code": "emit(quality_checks(table, spec, daily))",
}
WRONG_ID = {**GOOD, "hypothesis_id": "H9"}
PROMPT = build("decide", "# Objective\nExplain the drop.", 6000)
Settings = Callable[..., LLMSettings]


def ask(settings: LLMSettings, waits: list[tuple[float, str]]) -> NextStep:
    client = LLMClient(settings, on_wait=lambda s, r: waits.append((s, r)))
    step = client.ask(PROMPT, bound(NextStep, ["H1", "H2"]))
    assert isinstance(step, NextStep)
    return step


def test_tool_call_answer_is_validated_and_tokens_come_from_usage(
    server: FakeOpenAI, llm_settings: Settings
) -> None:
    server.script(answer(GOOD, usage=(1234, 56)))
    client = LLMClient(llm_settings(mode="tools"))
    step = client.ask(PROMPT, bound(NextStep, ["H1"]))
    assert step.to_decision().code == GOOD["code"]
    assert client.usage == Usage(decide_in=1234, decide_out=56)
    (seen,) = server.requests
    assert seen.body["tool_choice"]["function"]["name"] == "NextStep"
    assert seen.body["model"] == "gpt-4o-mini" and seen.headers["authorization"] == "Bearer sk-test-key"


@pytest.mark.parametrize("mode", ["json", "json_schema", "md_json"])
def test_json_modes_read_the_answer_from_content(
    server: FakeOpenAI, llm_settings: Settings, mode: str
) -> None:
    server.script(answer(GOOD))
    step = ask(llm_settings(mode=mode), [])
    assert step.hypothesis_id == "H1"
    assert "tools" not in server.requests[0].body


def test_invalid_answers_are_reasked_with_the_error_fed_back(
    server: FakeOpenAI, llm_settings: Settings
) -> None:
    server.script(malformed(), answer(WRONG_ID), answer(GOOD, usage=(10, 1)))
    client = LLMClient(llm_settings(max_validation_retries=2, mode="tools"))
    client.ask(PROMPT, bound(NextStep, ["H1"]))
    first, second, third = server.requests
    assert len(first.body["messages"]) == 2  # system + the state: no history
    assert "Validation Error" in second.text and "EOF" in second.text  # the JSON error went back
    assert "hypothesis_id 'H9' is not one of H1" in third.text
    assert client.usage.decide_out > 1 and client.usage.decide_in > 10  # every attempt counted


def test_validation_reasks_are_bounded(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(answer(WRONG_ID), answer(WRONG_ID), answer(WRONG_ID))
    with pytest.raises(InvalidOutput, match="after 2 attempt"):
        ask(llm_settings(max_validation_retries=1), [])
    assert len(server.requests) == 2 and len(server.pending) == 1


def test_code_that_does_not_compile_is_sent_back(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(answer({**GOOD, "code": "emit(quality_checks(table"}), answer(GOOD))
    ask(llm_settings(), [])
    assert "code does not compile" in server.requests[1].text


def test_rate_limit_honours_retry_after(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(fault(429, retry_after=0.04), fault(429, retry_after_ms=30), answer(GOOD))
    waits: list[tuple[float, str]] = []
    ask(llm_settings(), waits)
    assert [w for w, _ in waits] == [0.04, 0.03]  # the server's values, not the tiers
    assert "rate limited" in waits[0][1]


def test_retry_after_is_capped(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(fault(429, retry_after=3600), answer(GOOD))
    waits: list[tuple[float, str]] = []
    ask(llm_settings(max_wait_s=0.02), waits)
    assert waits[0][0] == 0.02


def test_rate_limits_escalate_through_the_tiers_one_request_per_attempt(
    server: FakeOpenAI, llm_settings: Settings
) -> None:
    server.script(*[fault(429)] * 4, answer(GOOD))
    waits: list[tuple[float, str]] = []
    ask(llm_settings(), waits)
    assert [w for w, _ in waits] == [0.001, 0.002, 0.003, 0.003]  # the last tier repeats
    assert len(server.requests) == 5  # the openai client does not retry on its own


def test_rate_limits_give_up_after_max_retries(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(*[fault(429)] * 5)
    with pytest.raises(LLMUnavailable, match="rate-limiting after 2 waits") as raised:
        ask(llm_settings(rate_limit_max_retries=2), [])
    assert len(server.requests) == 3
    # the client does not know the run: the command names it once the runner sets its id
    assert str(raised.value).endswith("; the run is saved: resume it later with `investigate resume RUN_ID`")
    raised.value.run_id = "20250101-000000-abcdef"
    assert str(raised.value).endswith("`investigate resume 20250101-000000-abcdef`")


def test_server_errors_back_off_on_the_connection_tiers(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(fault(500), fault(503), answer(GOOD))
    waits: list[tuple[float, str]] = []
    ask(llm_settings(), waits)
    assert [w for w, _ in waits] == [0.001, 0.002]
    assert "HTTP 500: scripted fault" in waits[0][1] and "HTTP 503" in waits[1][1]  # the server's words


def test_no_answer_within_the_stall_timeout_is_not_retried(
    server: FakeOpenAI, llm_settings: Settings
) -> None:
    """The server may still be working on it: a retry would queue behind it."""
    server.script(hang(3.0), answer(GOOD))
    waits: list[tuple[float, str]] = []
    started = time.monotonic()
    with pytest.raises(ModelStalled, match=r"within 0\.2s"):
        ask(llm_settings(stall_timeout_s=0.2), waits)
    assert time.monotonic() - started < 2.0  # did not wait for the 3 s answer
    assert waits == [] and len(server.requests) == 1


def _closed_port() -> int:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_endpoint_that_never_answered_is_a_configuration_error(llm_settings: Settings) -> None:
    """Nothing at the URL since the run started: one quick retry, then a user error naming the URL,
    not minutes of back-off for an outage that is really a typo."""
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    waits: list[tuple[float, str]] = []
    with pytest.raises(LLMUnreachable, match=f"no OpenAI-compatible endpoint answers at {url}") as err:
        ask(llm_settings(base_url=url), waits)
    assert isinstance(err.value, UserError) and len(waits) == 1


def test_an_endpoint_that_answered_then_dropped_walks_the_tiers(
    server: FakeOpenAI, llm_settings: Settings
) -> None:
    server.script(answer(GOOD), *[drop()] * 6)  # it answered once, then drops: an outage, so back off
    waits: list[tuple[float, str]] = []
    client = LLMClient(llm_settings(), on_wait=lambda s, r: waits.append((s, r)))
    client.ask(PROMPT, bound(NextStep, ["H1", "H2"]))
    with pytest.raises(LLMUnavailable, match="after 6 attempts"):
        client.ask(PROMPT, bound(NextStep, ["H1", "H2"]))
    assert [w for w, _ in waits] == FAST_CONNECTION
    assert all("connection failed" in r for _, r in waits)


FAST_CONNECTION = [0.001, 0.002, 0.003, 0.004, 0.005]


def test_default_backoff_tiers_are_the_documented_ones() -> None:
    s = LLMSettings(api_key="k")
    assert s.connection_backoff_s == [5, 15, 30, 60, 120]
    assert s.rate_limit_backoff_s[-3:] == [60, 300, 1800] and s.max_wait_s == 1800
    client = LLMClient(s)
    assert client._openai.max_retries == 0
    assert client._openai.timeout.read == s.stall_timeout_s  # type: ignore[union-attr]


def test_a_refused_key_fails_fast_as_a_user_error(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(fault(401, "Incorrect API key provided: sk-test-key"))
    waits: list[tuple[float, str]] = []
    with pytest.raises(LLMAuthError) as caught:
        ask(llm_settings(), waits)
    assert isinstance(caught.value, UserError) and caught.value.exit_code == 2
    assert "OPENAI_API_KEY" in str(caught.value) and "sk-test-key" not in str(caught.value)
    assert len(server.requests) == 1 and waits == []


def test_an_account_without_quota_fails_fast(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(fault(429, "You exceeded your current quota", code="insufficient_quota"))
    waits: list[tuple[float, str]] = []
    with pytest.raises(LLMAuthError, match="billing"):
        ask(llm_settings(), waits)
    assert len(server.requests) == 1 and waits == []


def test_an_unknown_model_is_a_clear_rejection(server: FakeOpenAI, llm_settings: Settings) -> None:
    server.script(fault(404, "The model `gpt-9` does not exist"))
    with pytest.raises(LLMRequestRejected, match="gpt-9"):
        ask(llm_settings(model="gpt-9"), [])


def test_no_key_and_no_endpoint_says_what_to_set() -> None:
    with pytest.raises(LLMAuthError, match="OPENAI_API_KEY is not set"):
        LLMClient(LLMSettings())


def test_a_prompt_over_the_budget_is_refused_before_sending(server: FakeOpenAI) -> None:
    with pytest.raises(PromptTooLarge, match="over context_budget_tokens"):
        build("decide", "x" * 4 * 6001, 6000)
    prompt = build("decide", "x" * 4 * 6000, 6000)
    assert prompt.tokens == 6000 + fixed_tokens("decide")
    assert server.requests == []


def test_the_system_prompt_carries_the_library_signatures() -> None:
    ref = library_reference()
    for fn in (
        "explain_segments(cube: pd.DataFrame, spec: AnalysisSpec",
        "quality_checks(",
        "drill_down(",
        "emit(",
    ):
        assert fn in ref
    assert ref in PROMPT.messages[0]["content"]


def test_a_blocking_countdown_is_not_slept_twice(
    server: FakeOpenAI, llm_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The seconds this thread asks to sleep, not the wall time: on a loaded machine the HTTP calls
    around the wait took over a second, and a second sleep is what the test is about."""
    updates: list[str] = []
    asked: list[float] = []
    real_sleep, me = time.sleep, threading.get_ident()

    def sleep(seconds: float) -> None:
        if threading.get_ident() == me:
            asked.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(time, "sleep", sleep)
    server.script(fault(429, retry_after=0.5), answer(GOOD))
    client = LLMClient(llm_settings(max_wait_s=1), on_wait=countdown(updates.append, tick=0.1))
    client.ask(PROMPT, bound(NextStep, ["H1"]))
    assert 0.3 <= sum(asked) <= 0.55  # the countdown's 0.5 s; slept twice would be about 1.0 s
    assert len(updates) >= 3 and "retrying in 1s" in updates[0] and "rate limited" in updates[0]
