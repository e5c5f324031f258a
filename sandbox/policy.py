"""What a session may ask for, and the ceilings the server's operator set (`python -m sandbox` flags).

The operator's flags are the policy: the backend is the server's, and network, memory, CPUs, pids
and images have ceilings a client may lower but never raise. A refused request says which limit it
hit and which flag raises it. The server's own limits are here too: how many sessions at once, how
long one may sit unused before it is closed, and the longest an execution may run (a client asking
for longer gets that ceiling).
"""

from __future__ import annotations

import os
import re
from typing import Literal

from pydantic import BaseModel, Field

__all__ = ["DEFAULT_IMAGE", "Policy", "SessionOptions", "parse_memory"]

DEFAULT_IMAGE = os.environ.get("INVESTIGATOR_SANDBOX_IMAGE", "investigator-sandbox:latest")
Backend = Literal["local", "docker"]
_UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_MEMORY = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([bkmgt]?)b?\s*$", re.IGNORECASE)


def parse_memory(text: str | int) -> int:
    """Bytes of a Docker-style memory size: `512m`, `2g`, `1.5g`, `1073741824`."""
    if isinstance(text, int):
        size = text
    else:
        m = _MEMORY.match(text)
        if m is None:
            raise ValueError(f"memory {text!r} is not a size like 512m or 2g")
        size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size <= 0:
        raise ValueError(f"memory {text!r} must be more than zero")
    return size


class SessionOptions(BaseModel):
    """How a session's kernel is made. A field left None takes the server's value."""

    backend: Backend | None = None
    image: str | None = None
    memory: str | None = None
    cpus: float | None = None
    pids: int | None = None
    timeout: float = 120.0
    network: bool = False
    workspace: str | None = Field(None, description="host folder to use; a fresh one if absent")
    data_paths: list[str] = Field(default_factory=list, description="host files mounted read-only")


class Policy(BaseModel):
    """The server's ceilings, from its command line. The defaults are the safe ones."""

    backend: Backend = "local"
    allow_network: bool = False
    max_memory: str = "2g"
    max_cpus: float = 1.0
    max_pids: int = 256
    images: list[str] = Field(default_factory=lambda: [DEFAULT_IMAGE], description="the first is the default")
    max_sessions: int = Field(8, description="sessions (kernels, containers) at once; more are refused")
    idle_timeout_s: float | None = Field(None, description="seconds unused before a session closes")
    max_timeout_s: float = Field(600.0, description="the longest one execution may run, whatever is asked")

    def model_post_init(self, _context: object) -> None:
        parse_memory(self.max_memory)
        if self.max_cpus <= 0 or self.max_pids <= 0 or not self.images:
            raise ValueError("--max-cpus and --max-pids must be positive and at least one image allowed")
        if self.max_sessions <= 0 or self.max_timeout_s <= 0 or (self.idle_timeout_s or 1) <= 0:
            raise ValueError("--max-sessions, --max-timeout and --idle-timeout must be positive")

    def timeout(self, asked: float | None, default: float) -> float:
        """The seconds an execution may run: what was asked (else `default`), at most the ceiling."""
        return min(self.max_timeout_s, default if asked is None else asked)

    def apply(self, asked: SessionOptions) -> SessionOptions:
        """`asked` with the server's values filled in; `PermissionError` naming the limit and
        the flag that raises it when it asks for more than the operator allows."""
        if asked.backend not in (None, self.backend):
            raise PermissionError(
                f"backend {asked.backend!r} is not offered: this server runs {self.backend} kernels only "
                f"(its operator started it with --backend {self.backend}); start a server with "
                f"--backend {asked.backend} for {asked.backend} kernels"
            )
        if asked.network and not self.allow_network:
            raise PermissionError(
                "network=true is above this server's limit (no network for kernels); "
                "the operator allows it with --allow-network"
            )
        memory = asked.memory or self.max_memory
        if parse_memory(memory) > parse_memory(self.max_memory):
            raise PermissionError(
                f"memory {memory!r} is above this server's limit of {self.max_memory}; "
                "the operator raises it with --max-memory"
            )
        cpus = self.max_cpus if asked.cpus is None else asked.cpus
        if not 0 < cpus <= self.max_cpus:
            raise PermissionError(
                f"cpus={cpus} is outside this server's limit (more than 0, at most {self.max_cpus}); "
                "the operator raises it with --max-cpus"
            )
        pids = self.max_pids if asked.pids is None else asked.pids
        if not 0 < pids <= self.max_pids:
            raise PermissionError(
                f"pids={pids} is outside this server's limit (more than 0, at most {self.max_pids}); "
                "the operator raises it with --max-pids"
            )
        image = asked.image or self.images[0]
        if image not in self.images:
            raise PermissionError(
                f"image {image!r} is not allowed on this server (allowed: {', '.join(self.images)}); "
                "the operator allows more with --allow-image"
            )
        return asked.model_copy(
            update={
                "backend": self.backend,
                "image": image,
                "memory": memory,
                "cpus": cpus,
                "pids": pids,
                "timeout": self.timeout(asked.timeout, asked.timeout),
            }
        )
