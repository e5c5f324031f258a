"""What a run is made of: the planner and the kernel a run's settings ask for, and what a front door
plugs in (progress, the LLM's back-off countdown, warnings, its LLM choices)."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from investigator.config import Settings
from investigator.errors import ConfigError
from investigator.preflight import choose_sandbox
from investigator.run.decision import Decision
from investigator.run.seams import Kernel, Planner
from investigator.run.state import RunState

if TYPE_CHECKING:
    from investigator.llm.wait import OnWait


Progress = Callable[[RunState, Decision | None], None]


@dataclass(frozen=True)
class Hooks:
    """What a front door plugs in: progress updates, a countdown while the LLM backs off, where a
    one-line warning goes, and the count of tokens the model has sent while it answers."""

    progress: Progress | None = None
    on_wait: OnWait | None = None
    warn: Callable[[str], None] | None = None
    on_tokens: Callable[[int], None] | None = None  # the model's answer so far, in tokens


class LLMChoice(BaseModel):
    """The front door's choices for the LLM planner (flags or keyword arguments); unset keeps
    `configs/llm.yaml` and the environment."""

    model: str | None = None
    mode: str | None = None


def make_planner(settings: Settings, hooks: Hooks | None = None, llm: LLMChoice | None = None) -> Planner:
    hooks = hooks or Hooks()
    if settings.planner == "offline":
        from investigator.planners.offline import OfflinePlanner

        return OfflinePlanner()
    if settings.planner == "llm":  # imported lazily: openai and instructor are slow to load
        from investigator.llm import load_llm_settings
        from investigator.planners.llm import LLMPlanner

        choice = (llm or LLMChoice()).model_dump(exclude_none=True)
        return LLMPlanner(
            load_llm_settings(**choice),
            settings,
            on_wait=hooks.on_wait,
            on_tokens=hooks.on_tokens,
            on_note=hooks.warn,
        )
    raise ConfigError(f"planner {settings.planner!r} is not one of offline, llm")


def make_kernel(
    settings: Settings,
    folder: Path,
    data_path: str | None,
    spawned: subprocess.Popen[bytes] | None = None,
    cancelled: threading.Event | None = None,
) -> Kernel:
    """The agent reaches the kernel only through an MCP client session (stdio to a child server,
    `spawned` ahead of time when given), whatever the backend; `inprocess` skips all of that and is
    for tests and benchmarks only. `cancelled`: set when the run is refused while the kernel starts
    (its start then gives up instead of retrying)."""
    workdir = folder / "workspace"
    if settings.sandbox == "inprocess":
        from investigator.kernels.inprocess import InProcessKernel

        return InProcessKernel(workdir)
    from investigator.kernels.mcp import McpKernel

    backend = sandbox_backend(settings)
    assert backend in ("local", "docker"), backend  # inprocess returned above; auto is resolved
    files = [data_path] if data_path else []  # none: a local kernel reads the extract where it lies
    return McpKernel(backend=backend, workdir=workdir, data_files=files, process=spawned, cancelled=cancelled)


def sandbox_backend(settings: Settings) -> Literal["local", "docker", "inprocess"]:
    """The sandbox backend, `auto` resolved (a daemon is checked once per run, by `choose_sandbox`)."""
    backend = choose_sandbox(settings).sandbox if settings.sandbox == "auto" else settings.sandbox
    assert backend != "auto", backend
    return backend
