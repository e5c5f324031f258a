"""Local servers (llama.cpp, Ollama, vLLM) over real HTTP: the structured-output mode each one
enforces, answers cut at their token cap, slow and stalled streams. `FakeOpenAI(llama_cpp=True)`
behaves as llama.cpp's server does (see `investigator.testing.fake_openai`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from unittest.mock import ANY

import pytest

from investigator.llm import AnswerCutOff, LLMClient, LLMRequestRejected, LLMSettings, ModelStalled
from investigator.llm.modes import refusal_names_the_mode
from investigator.llm.prompts import build
from investigator.llm.schemas import NextStep, bound
from investigator.testing import LLAMA_CPP_REFUSAL, FakeOpenAI, answer, fault, stall

from .helpers import FAST

GOOD = {
    "type": "ANALYZE",
    "rationale": "test it",
    "hypothesis_id": "H1",
    "code": "emit(quality_checks(table, spec, daily))",
}
LONG = {**GOOD, "rationale": "because " * 2000}  # a small model that rambles: ~4000 tokens
PROMPT = build("decide", "# Objective\nExplain the drop.", 6000)
Make = Callable[..., LLMSettings]


@pytest.fixture
def llama() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(llama_cpp=True) as s:
        yield s


def settings_for(server: FakeOpenAI, **overrides: object) -> LLMSettings:
    return LLMSettings(**{"base_url": server.url, **FAST, **overrides})


def client_for(
    settings: LLMSettings, notes: list[str] | None = None, waits: list[str] | None = None
) -> LLMClient:
    return LLMClient(
        settings,
        on_wait=lambda s, r: (waits if waits is not None else []).append(r),
        on_note=(notes if notes is not None else []).append,
    )


# 1. the structured output the server can enforce ---------------------------------------------------
def test_auto_finds_llama_cpps_json_object_schema_once_per_endpoint(llama: FakeOpenAI) -> None:
    llama.script(answer(GOOD), answer(GOOD))
    notes: list[str] = []
    waits: list[str] = []
    client = client_for(settings_for(llama), notes, waits)
    client.ask(PROMPT, bound(NextStep, ["H1"]))
    first, second = llama.requests
    assert first.body["response_format"]["type"] == "json_schema"  # the strictest first
    fmt = second.body["response_format"]
    assert fmt["type"] == "json_object" and fmt["schema"]["title"] == "NextStep"  # enforced by a grammar
    assert waits == []  # a refusal is "try the next mode", never an outage to back off from
    assert LLAMA_CPP_REFUSAL in notes[0] and "json_schema" in notes[0]  # the server's own words
    assert "json_object_schema" in notes[-1] and client.mode == "json_object_schema"
    # a second client on the same endpoint (the same run) does not probe again
    client_for(settings_for(llama)).ask(PROMPT, bound(NextStep, ["H1"]))
    assert len(llama.requests) == 3 and llama.requests[2].body["response_format"]["type"] == "json_object"


def test_forced_json_schema_on_llama_cpp_says_why_at_once(llama: FakeOpenAI) -> None:
    waits: list[str] = []
    started = time.monotonic()
    with pytest.raises(LLMRequestRejected) as refused:
        client_for(settings_for(llama, mode="json_schema"), waits=waits).ask(PROMPT, bound(NextStep, ["H1"]))
    message = str(refused.value)
    assert LLAMA_CPP_REFUSAL in message and "HTTP 500" in message and "--llm-mode" in message
    assert "\n" not in message and waits == [] and len(llama.requests) == 1
    assert time.monotonic() - started < 2


def test_servers_that_enforce_json_schema_keep_it() -> None:
    with FakeOpenAI() as vllm:  # OpenAI, vLLM, Ollama's OpenAI endpoint
        vllm.script(answer(GOOD))
        client = client_for(settings_for(vllm))
        client.ask(PROMPT, bound(NextStep, ["H1"]))
        (seen,) = vllm.requests
        assert (
            seen.body["response_format"]["json_schema"]["name"] == "NextStep" and client.mode == "json_schema"
        )


@pytest.mark.parametrize("mode", ["json_schema", "json_object_schema", "tools"])
def test_the_schema_sent_names_this_runs_hypotheses(mode: str) -> None:
    """An enforced schema is the only thing a small model cannot break: the ids it may write are
    this run's, and a run that must conclude can only answer CONCLUDE."""
    conclude = {"type": "CONCLUDE", "rationale": "done", "conclusion": "c", "confidence": "high"}
    with FakeOpenAI(llama_cpp=mode == "json_object_schema") as server:
        server.script(answer(GOOD), answer(conclude))
        client = client_for(settings_for(server, mode=mode))
        client.ask(PROMPT, bound(NextStep, ["H1", "H3"]))
        client.ask(PROMPT, bound(NextStep, ["H1", "H3"], must_conclude=True))
        sent = []
        for r in server.requests:
            fmt = r.body.get("response_format") or {}
            tools = r.body.get("tools") or [{}]
            sent.append(
                fmt.get("json_schema", {}).get("schema")
                or fmt.get("schema")
                or tools[0]["function"]["parameters"]
            )
        ids = sent[0]["properties"]["hypothesis_id"]["anyOf"][0]
        assert ids == {"type": "string", "enum": ["H1", "H3"]}
        assert sent[0]["properties"]["type"] == {"$ref": "#/$defs/DecisionType", "description": ANY}
        assert sent[1]["properties"]["type"]["enum"] == ["CONCLUDE"]


def test_a_server_without_response_format_gets_tool_calls() -> None:
    no_format = "Unsupported parameter: 'response_format' is not supported with this model."
    with FakeOpenAI() as server:
        server.script(fault(400, no_format), fault(400, no_format), answer(GOOD))
        client = client_for(settings_for(server))
        client.ask(PROMPT, bound(NextStep, ["H1"]))
        assert [r.body.get("response_format", {}).get("type") for r in server.requests] == [
            "json_schema", "json_object", None
        ]  # fmt: skip
        assert server.requests[2].body["tool_choice"]["function"]["name"] == "NextStep"


@pytest.mark.parametrize(
    ("status", "message", "refusal"),
    [
        (500, LLAMA_CPP_REFUSAL, True),
        (400, "response_format json_schema is not supported", True),
        (500, "CUDA out of memory", False),  # an outage: backed off, retried
        (503, "response_format: loading model", False),
        (404, "model not found", False),
    ],
)
def test_which_errors_name_the_mode(status: int, message: str, refusal: bool) -> None:
    assert refusal_names_the_mode("json_schema", status, message) is refusal


# 3. a cut-off answer is named as such --------------------------------------------------------------
def test_llama_cpp_cut_at_max_tokens_in_a_tool_call_is_named_cut_off(llama: FakeOpenAI) -> None:
    """llama.cpp reports finish_reason "tool_calls" for a tool call cut at the cap: the user used to
    read "Invalid JSON: EOF while parsing a string", after re-asks that were cut the same way."""
    llama.script(answer(LONG), answer(LONG), answer(LONG))
    with pytest.raises(AnswerCutOff, match="the model's answer was cut off at 600 tokens") as cut:
        client_for(settings_for(llama, mode="tools")).ask(PROMPT, bound(NextStep, ["H1"]))
    assert "EOF" not in str(cut.value)
    (seen,) = llama.requests  # not re-asked: the same question would be cut again
    assert seen.body["max_tokens"] == 600


@pytest.mark.parametrize("mode", ["auto", "json"])
def test_an_answer_cut_with_finish_reason_length_is_named_cut_off(mode: str) -> None:
    with FakeOpenAI() as server:
        server.script(answer(LONG))
        with pytest.raises(AnswerCutOff, match="cut off at 64 tokens"):
            client_for(settings_for(server, mode=mode, max_output_tokens=64)).ask(
                PROMPT, bound(NextStep, ["H1"])
            )


def test_each_kind_of_answer_has_its_own_cap() -> None:
    s = LLMSettings(api_key="k")
    assert (s.answer_tokens("decide"), s.answer_tokens("compress"), s.answer_tokens("reflect")) == (
        600,
        400,
        400,
    )
    assert LLMSettings(api_key="k", max_output_tokens=900).answer_tokens("compress") == 900
    assert LLMSettings(api_key="k", max_output_tokens={"decide": 800}).answer_tokens("reflect") == 400
    assert LLMSettings(api_key="k", request_timeout_s=300).stall_timeout_s == 300  # old configs load


# 2. timeouts sized for a slow model -----------------------------------------------------------------
def test_a_slow_stream_is_read_to_the_end_past_the_stall_timeout() -> None:
    """~40 tokens at 40 ms each: 1.6 s in all, four times the stall timeout, never a stall."""
    with FakeOpenAI(token_delay=0.04) as slow:
        slow.script(answer(GOOD))
        counts: list[int] = []
        client = LLMClient(
            settings_for(slow, stall_timeout_s=0.4), on_tokens=counts.append, on_note=lambda n: None
        )
        started = time.monotonic()
        step = client.ask(PROMPT, bound(NextStep, ["H1"]))
        assert step.hypothesis_id == "H1" and time.monotonic() - started > 1.0
        assert counts[0] == 0 and counts[-1] >= 30 and counts == sorted(counts)
        assert slow.requests[0].body["stream"] is True


def test_a_stalled_stream_is_abandoned_and_never_retried_behind_itself() -> None:
    with FakeOpenAI() as server:
        server.script(stall(after=5, seconds=3.0, body=GOOD), answer(GOOD))
        waits: list[str] = []
        client = client_for(settings_for(server, stall_timeout_s=0.3), waits=waits)
        started = time.monotonic()
        with pytest.raises(ModelStalled, match=r"stopped sending tokens for 0\.3s after 5"):
            client.ask(PROMPT, bound(NextStep, ["H1"]))
        assert time.monotonic() - started < 2 and waits == [] and len(server.requests) == 1
        assert client.usage.decide_out == 5 and client.usage.decide_in > 0  # what it cost still counts
        hung_up = time.monotonic()
        while server.busy and time.monotonic() - hung_up < 1.0:  # the server sees the hang-up
            time.sleep(0.01)
        assert server.busy == 0  # its generation stopped, long before the 3 s stall would have ended
        client.ask(PROMPT, bound(NextStep, ["H1"]))  # the next step asks again, alone
        assert server.busy_max == 1  # nothing ever queued behind the abandoned request


def test_the_servers_words_are_one_line_with_the_key_scrubbed() -> None:
    words = "response_format json_schema is not supported (key sk-local-secret-123)\nTraceback: ..."
    with FakeOpenAI() as server:
        server.script(fault(400, words))
        settings = settings_for(server, mode="json_schema", api_key="sk-local-secret-123")
        with pytest.raises(LLMRequestRejected) as refused:
            client_for(settings).ask(PROMPT, bound(NextStep, ["H1"]))
    message = str(refused.value)
    assert "is not supported (key ***)" in message and "sk-local" not in message and "\n" not in message


def test_a_server_without_stream_options_is_asked_again_without_them() -> None:
    with FakeOpenAI() as server:
        server.script(fault(400, "Unrecognized request argument supplied: stream_options"), answer(GOOD))
        client = client_for(settings_for(server))
        client.ask(PROMPT, bound(NextStep, ["H1"]))
        first, second = server.requests
        assert "stream_options" in first.body and "stream_options" not in second.body
        assert client.usage.decide_out > 0  # estimated from the chunks
