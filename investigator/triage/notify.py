"""Telling people: one message per triage run, sent through Apprise to each target, retried with
backoff. A delivery that still fails is recorded, never raised: the job's result is the digest."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Protocol

from pydantic import BaseModel

from investigator.triage.secrets import Redactor, display_target


class Notification(BaseModel):
    """One target's delivery: `target` with its secrets masked."""

    target: str
    ok: bool
    error: str | None = None
    attempts: int = 0


class Notifier(Protocol):
    """Delivers one message to one target URL; returns None when delivered, else why not."""

    def send(self, url: str, title: str, body: str) -> str | None: ...


class AppriseNotifier:
    """Any service Apprise knows (slack://, mailto://, msteams://, json:// webhooks, ...)."""

    def send(self, url: str, title: str, body: str) -> str | None:
        import apprise

        sender = apprise.Apprise()
        if not sender.add(url):
            return "Apprise does not recognise this URL (see https://github.com/caronc/apprise/wiki)"
        quiet = logging.getLogger("apprise")
        propagates, quiet.propagate = quiet.propagate, False  # its lines reach us through the capture
        try:
            with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as logs:
                ok = sender.notify(title=title, body=body, body_format=apprise.NotifyFormat.MARKDOWN)
        finally:
            quiet.propagate = propagates
        if ok:
            return None
        lines = [line.strip() for line in logs.getvalue().splitlines() if line.strip()]
        return lines[-1] if lines else "delivery failed"


def deliver(
    urls: list[str],
    title: str,
    body: str,
    notifier: Notifier,
    redact: Redactor,
    retries: int = 3,
    backoff_s: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
) -> list[Notification]:
    """Send to every target, each tried up to `retries` times, waiting 1x, 2x, 4x ... `backoff_s`."""
    out = []
    for url in urls:
        error: str | None = None
        attempts = 0
        for attempt in range(retries):
            attempts = attempt + 1
            try:
                error = notifier.send(url, title, body)
            except Exception as e:  # a notifier's bug must not fail the morning's job
                error = f"{type(e).__name__}: {e}"
            if error is None:
                break
            if attempt + 1 < retries:
                sleep(backoff_s * 2**attempt)
        out.append(
            Notification(
                target=redact(display_target(url)),
                ok=error is None,
                error=redact(error) if error else None,
                attempts=attempts,
            )
        )
    return out
