"""Delivery through Apprise to a real local webhook: retried with backoff, failures recorded."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
import yaml

from investigator.sources.synth import generate
from investigator.testing import FakeNotifier
from investigator.triage.config import TriageConfig
from investigator.triage.job import run_triage
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
    """A notifier's bug is a failed delivery, retried, recorded with the exception's type and its
    secret masked, never the job's exception."""
    broken = FakeNotifier(fail=RuntimeError("refused by https://hooks.example/tok-123"))
    waits: list[float] = []
    sent = deliver(
        ["json://127.0.0.1:1/x"], "T", "b", broken, Redactor(["tok-123"]), retries=2, sleep=waits.append
    )
    assert [(n.ok, n.attempts, n.error) for n in sent] == [
        (False, 2, "RuntimeError: refused by https://hooks.example/****")
    ]
    assert broken.sent == [("json://127.0.0.1:1/x", "T", "b")] * 2 and waits == [1.0]


def test_a_reason_then_none_is_delivered_on_the_second_attempt_each_target_tried_on_its_own() -> None:
    notifier = FakeNotifier(replies=["HTTP 503", None])
    sent = deliver(
        ["json://a/1", "json://b/2"], "T", "b", notifier, Redactor(), backoff_s=0.25, sleep=lambda s: None
    )
    assert [(n.ok, n.attempts, n.error) for n in sent] == [(True, 2, None), (True, 1, None)]
    assert [url for url, _, _ in notifier.sent] == ["json://a/1", "json://a/1", "json://b/2"]


def test_a_secret_the_notifier_percent_encodes_is_masked_in_every_form(tmp_path: Path) -> None:
    """`${HOOK_SECRET}` with a space, `+`, `&`, a quote and a non-ASCII letter: Apprise shows it
    percent-encoded; the digest, stdout, the JSON logs and the state never hold it in any form."""
    secret = 'tok 9f8e+7d6c&5b"4a/é'
    frame, _ = generate("segment_change", seed=3, days=70, segment={"channel": "social"}, factor=0.4)
    frame.to_parquet(tmp_path / "d.parquet", index=False)
    with Hook(statuses=[500, 500, 500]) as failing, Hook() as hook:
        config = {
            "data": str(tmp_path / "d.parquet"),
            "window": "7d",
            "metrics": ["revenue"],
            "scan_segments": ["channel"],
            "budget": {"max_investigations": 0},
            "notify": [hook.url("/hook/${HOOK_SECRET}"), failing.url("/x/${HOOK_SECRET}")],
            "state": str(tmp_path / "state.sqlite"),
            "runs_dir": str(tmp_path / "runs"),
        }
        (tmp_path / "triage.yaml").write_text(yaml.safe_dump(config))
        r = subprocess.run(
            [sys.executable, "-m", "investigator", "triage", "--config", "triage.yaml", "--log-format=json"],
            capture_output=True, text=True, timeout=300, cwd=tmp_path,
            env={**os.environ, "HOOK_SECRET": secret},
        )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert hook.received and len(failing.received) == 3  # delivered, and a failure with its error
    forms = {secret, quote(secret), quote(secret, safe=""), quote_plus(secret), quote(secret).lower()}
    forms |= {json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], html.escape(secret)}
    forms |= {quote(secret, safe="/+&"), "tok%209f8e"}
    written = [p.read_text(errors="replace") for p in (tmp_path / "runs").rglob("digest.*")]
    state = (tmp_path / "state.sqlite").read_bytes().decode(errors="replace")
    for where, text in {
        "stdout": r.stdout,
        "stderr": r.stderr,
        "state": state,
        "digest": "".join(written),
    }.items():
        leaked = [f for f in forms if f in text]
        assert not leaked, f"{where} holds the secret as {leaked}"
    assert "****" in r.stdout and '"notified"' in r.stderr


EVIL = "<!channel> @here <http://evil.example|click> [more](http://evil.example)"


def test_data_values_reach_slack_and_webhooks_as_text_not_mentions_or_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A segment value that would ping a channel or hide a link is shown as text: the body Apprise
    gets (json webhook) escapes it, and Slack's payload (Apprise's own conversion, sent to a local
    server standing in for hooks.slack.com) holds no mention and no anchor."""
    from apprise.plugins.slack import NotifySlack

    frame, _ = generate("segment_change", seed=3, days=70, segment={"channel": "social"}, factor=0.4)
    frame["channel"] = frame["channel"].replace({"social": EVIL})
    frame.to_parquet(tmp_path / "d.parquet", index=False)
    with Hook() as hook:
        monkeypatch.setattr(NotifySlack, "webhook_url", f"http://127.0.0.1:{hook.port}/slack")
        config = TriageConfig.model_validate(
            {
                "data": str(tmp_path / "d.parquet"),
                "metrics": ["revenue"],
                "scan_segments": ["channel"],
                "budget": {"max_investigations": 0},
                "notify": [hook.url("/json"), "slack://T000A/B000B/XXXXXXXXXXXXXXXXXXXXXXXX"],
                "state": str(tmp_path / "state.sqlite"),
                "runs_dir": str(tmp_path / "runs"),
            }
        )
        outcome = run_triage(config)
    assert [n.ok for n in outcome.digest.notifications] == [True, True]
    sent = dict(hook.received)
    body, slack = sent["/json"]["message"], sent["/slack/T000A/B000B/XXXXXXXXXXXXXXXXXXXXXXXX"]
    slack_text = slack["attachments"][0]["text"]
    assert "channel" in body and "evil.example" in slack_text  # the value is there, as text
    assert not re.search(r"(?<!\\)[<>\[\]]", body), body  # Markdown escapes: \< is a literal <
    assert "<" not in slack_text and ">" not in slack_text, slack_text  # so nothing is an anchor
    assert "@here" not in body + slack_text and "[more](" not in body  # Slack draws no [label](url)
    assert "&lt;!channel&gt;" in slack_text  # Slack shows it as the characters it is
    digest_md = (outcome.folder / "digest.md").read_text()  # type: ignore[operator]
    assert "<!channel>" not in digest_md and "[more](" not in digest_md
