"""Delivery through Apprise to a real local webhook: retried with backoff, failures recorded."""

from __future__ import annotations

from investigator.triage.notify import AppriseNotifier, deliver
from investigator.triage.secrets import Redactor

from .webhook import Hook


def test_a_500_then_success_is_delivered_on_the_second_attempt() -> None:
    waits: list[float] = []
    with Hook(statuses=[500]) as hook:
        sent = deliver(
            [hook.url()],
            "Triage",
            "revenue fell",
            AppriseNotifier(),
            Redactor(),
            backoff_s=0.5,
            sleep=waits.append,
        )
    assert [(n.ok, n.attempts) for n in sent] == [(True, 2)]
    assert waits == [0.5]
    assert len(hook.received) == 2
    path, payload = hook.received[-1]
    assert path == "/hook" and "revenue fell" in payload["message"] and payload["title"] == "Triage"


def test_a_target_that_keeps_failing_is_recorded_with_backoff_and_its_secret_masked() -> None:
    waits: list[float] = []
    secret = "s3cr3t-token-value"
    with Hook(statuses=[500, 500, 500]) as hook:
        sent = deliver(
            [hook.url(f"/hook/{secret}")],
            "T",
            "body",
            AppriseNotifier(),
            Redactor([secret]),
            backoff_s=0.01,
            sleep=waits.append,
        )
    n = sent[0]
    assert not n.ok and n.attempts == 3 and n.error
    assert waits == [0.01, 0.02]
    assert len(hook.received) == 3
    assert secret not in n.model_dump_json() and n.target.startswith("json://127.0.0.1")


def test_a_notifier_that_raises_does_not_fail_the_delivery_call() -> None:
    class Broken:
        def send(self, url: str, title: str, body: str) -> str | None:
            raise RuntimeError("boom")

    sent = deliver(["json://127.0.0.1:1/x"], "T", "b", Broken(), Redactor(), retries=2, sleep=lambda s: None)
    assert not sent[0].ok and "boom" in (sent[0].error or "")
