"""Live progress for the Python API and the magics: iteration n/max, the current hypothesis, the last
decision, elapsed time and tokens.

In a Jupyter kernel it is one display updated in place (`display_id`), which needs no widget library
and also lands in notebooks executed headless; on a terminal it is a rich status line on stderr, as
in the CLI; elsewhere (pipes, scripts under CI) it stays silent.
"""

from __future__ import annotations

import html
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from pydantic import BaseModel

from investigator.factories import Hooks
from investigator.run.decision import Decision
from investigator.run.state import RunState


class Snapshot(BaseModel):
    """One progress update, as shown."""

    iteration: int = 0
    max_iterations: int
    hypothesis: str = ""
    decision: str = ""
    elapsed_s: float = 0.0
    tokens: int = 0
    note: str = "starting the kernel and loading the data..."
    done: bool = False

    def text(self) -> str:
        head = f"iteration {self.iteration}/{self.max_iterations}"
        parts = [head, self.hypothesis or "-", self.decision or "-", f"{self.elapsed_s:.1f}s"]
        if self.tokens:  # only a model spends tokens; the offline planner's "0 tokens" says nothing
            parts.append(f"{self.tokens:,} tokens")
        return " · ".join(parts) + (f" — {self.note}" if self.note else "")

    def html(self) -> str:
        share = 1.0 if self.done else min(self.iteration / max(self.max_iterations, 1), 1.0)
        bar = "#2f7d4a" if self.done else "#3b6ea5"
        e = html.escape
        extra = [f"{self.elapsed_s:.1f}s", *([f"{self.tokens:,} tokens"] if self.tokens else [])]
        extra += [e(self.note)] if self.note else []
        return (
            '<div class="inv-progress" style="font-family:sans-serif;font-size:13px;max-width:760px">'
            f"<div><b>iteration {self.iteration}/{self.max_iterations}</b> · {' · '.join(extra)}</div>"
            '<div style="background:#e6e9ee;height:6px;border-radius:3px;margin:4px 0">'
            f'<div style="background:{bar};width:{share:.0%};height:6px;border-radius:3px"></div></div>'
            f"<div>hypothesis: {e(self.hypothesis or '-')}</div>"
            f"<div>last decision: {e(self.decision or '-')}</div></div>"
        )


def snapshot(state: RunState, decision: Decision | None, max_iterations: int, started: float) -> Snapshot:
    hyp_id = decision.hypothesis_id if decision and decision.hypothesis_id else None
    hyp = next((h for h in state.hypotheses if h.id == hyp_id), None) or next(
        (h for h in state.hypotheses if h.status == "INVESTIGATING"), None
    )
    what = f"{decision.type.value}: {decision.rationale}" if decision else ""
    return Snapshot(
        iteration=state.iteration,
        max_iterations=max_iterations,
        hypothesis=f"{hyp.id} ({hyp.status}) {hyp.statement}" if hyp else "",
        decision=what if len(what) <= 160 else what[:157] + "...",
        elapsed_s=time.monotonic() - started,
        tokens=state.tokens.total,
        note=f"done ({state.status})" if state.done else "",
        done=state.done,
    )


@contextmanager
def progress(max_iterations: int, enabled: bool = True) -> Iterator[Hooks]:
    """Hooks that show progress where the caller is: a notebook, a terminal, or nowhere."""
    if enabled and _in_kernel():
        yield _notebook_hooks(max_iterations)
    elif enabled and sys.stderr.isatty():
        with _terminal_hooks(max_iterations) as hooks:
            yield hooks
    else:
        yield Hooks(warn=warn)


def warn(message: str) -> None:
    """A one-line warning, on stderr (a notebook shows it in the cell's output)."""
    print(message, file=sys.stderr, flush=True)


def _in_kernel() -> bool:
    """True inside a Jupyter kernel; IPython is only looked at if something already imported it."""
    if "IPython" not in sys.modules:
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _notebook_hooks(max_iterations: int) -> Hooks:
    from IPython.display import display

    started = time.monotonic()
    first = Snapshot(max_iterations=max_iterations)
    handle = display(_bundle(first), raw=True, display_id=True)
    shown = [first]

    def show(s: Snapshot) -> None:
        shown[0] = s
        if handle is not None:
            handle.update(_bundle(s), raw=True)

    def update(state: RunState, decision: Decision | None) -> None:
        show(snapshot(state, decision, max_iterations, started))

    def note(text: str) -> None:
        show(shown[0].model_copy(update={"note": text, "elapsed_s": time.monotonic() - started}))

    from investigator.llm.wait import countdown

    return Hooks(progress=update, on_wait=countdown(note), warn=warn, on_tokens=lambda n: note(waiting(n)))


def waiting(tokens: int) -> str:
    """The note while the model answers: its tokens so far (0 while it reads the prompt)."""
    return f"waiting for the model ({tokens:,} tokens so far)"


def _bundle(s: Snapshot) -> dict[str, str]:
    return {"text/plain": s.text(), "text/html": s.html()}


@contextmanager
def _terminal_hooks(max_iterations: int) -> Iterator[Hooks]:
    from rich.console import Console

    from investigator.llm.wait import countdown
    from investigator.terminal import text

    lines = StatusLines(max_iterations)
    with Console(stderr=True).status(text(lines.shown.note)) as status:

        def update(state: RunState, decision: Decision | None) -> None:
            status.update(text(lines.step(state, decision)))

        def notify(line: str) -> None:
            status.update(text(line))

        def tokens(n: int) -> None:
            status.update(text(lines.tokens(n)))

        yield Hooks(progress=update, on_wait=countdown(notify), warn=warn, on_tokens=tokens)


class StatusLines:
    """The terminal's status line: the last step's snapshot, and what the model is doing now."""

    def __init__(self, max_iterations: int) -> None:
        self.max_iterations, self.started = max_iterations, time.monotonic()
        self.shown = Snapshot(max_iterations=max_iterations)

    def step(self, state: RunState, decision: Decision | None) -> str:
        self.shown = snapshot(state, decision, self.max_iterations, self.started)
        return self.shown.text()

    def tokens(self, n: int) -> str:
        """The last step's line with the model's progress in place of its note."""
        now = self.shown.model_copy(update={"note": waiting(n), "elapsed_s": time.monotonic() - self.started})
        return now.text()
