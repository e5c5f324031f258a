"""Open a page in headless Chromium over the DevTools protocol (`--remote-debugging-pipe`: JSON
messages on fds 3/4, no websocket library), collect console errors and requests, evaluate checks
and take a full-page screenshot."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
    "--disable-extensions", "--disable-dev-shm-usage", "--remote-debugging-pipe",
]  # fmt: skip


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


class Page:
    """What the page did: console errors, requested URLs, an evaluated value, a screenshot."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.value: Any = None


class _Pipe:
    def __init__(self, write_fd: int, read_fd: int) -> None:
        self.w, self.r, self.buf, self.next_id = write_fd, read_fd, b"", 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> int:
        self.next_id += 1
        msg: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.r, 1 << 16)
            if not chunk:
                raise RuntimeError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return dict(json.loads(raw))

    def call(self, method: str, params: dict[str, Any] | None = None, session: str | None = None,
             timeout: float = 30) -> dict[str, Any]:  # fmt: skip
        want, deadline = self.send(method, params, session), time.monotonic() + timeout
        while True:
            msg = self.read(deadline)
            if msg.get("id") == want:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return dict(msg.get("result", {}))
            self.events.append(msg)

    def wait_for(self, method: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not any(e.get("method") == method for e in self.events):
            self.events.append(self.read(deadline))


def open_page(binary: str, url: str, screenshot: Path, check: str, width: int = 1100) -> Page:
    """Load `url`, evaluate the JS expression `check` (its value is returned), save a screenshot."""
    to_chrome_r, to_chrome_w = os.pipe()
    from_chrome_r, from_chrome_w = os.pipe()
    # chromium reads the protocol on fd 3 and writes on fd 4: bash puts the pipes there (sh/dash
    # cannot redirect from fds above 9)
    redirect = f'exec "$0" "$@" 3<&{to_chrome_r} 4>&{from_chrome_w}'
    with tempfile.TemporaryDirectory(prefix="chromium-") as profile:
        proc = subprocess.Popen(
            ["bash", "-c", redirect, binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(to_chrome_r, from_chrome_w), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        pipe = _Pipe(to_chrome_w, from_chrome_r)
        try:
            return _visit(pipe, url, screenshot, check, width)
        finally:
            with contextlib.suppress(OSError):
                pipe.send("Browser.close")
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            os.close(to_chrome_w)
            os.close(from_chrome_r)


def _visit(pipe: _Pipe, url: str, screenshot: Path, check: str, width: int) -> Page:
    target = pipe.call("Target.createTarget", {"url": "about:blank"})["targetId"]
    s = pipe.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        pipe.call(f"{domain}.enable", session=s)
    metrics = {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}
    pipe.call("Emulation.setDeviceMetricsOverride", metrics, session=s)
    pipe.call("Page.navigate", {"url": url}, session=s)
    pipe.wait_for("Page.loadEventFired")
    page = Page()
    page.value = pipe.call("Runtime.evaluate", {"expression": check, "returnByValue": True}, session=s)[
        "result"
    ].get("value")
    shot = pipe.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}, session=s)
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    for e in pipe.events:
        p, method = e.get("params", {}), e.get("method")
        if method == "Runtime.exceptionThrown":
            page.errors.append(str(p.get("exceptionDetails", {}).get("text")))
        elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            page.errors.append(json.dumps(p.get("args")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            page.errors.append(str(p["entry"].get("text")))
        elif method == "Network.requestWillBeSent":
            page.requests.append(str(p.get("request", {}).get("url", ""))[:80])
    return page
