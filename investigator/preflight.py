"""What is checked before any work starts: where the code will run, and where the run will be
written. Each refusal is one line that says what to do."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

from investigator.config import Settings
from investigator.errors import ConfigError

LOCAL_LLM_WARNING = (
    "warning: --sandbox local with the llm planner: code the model writes runs on this machine, as "
    "you, with your files and network (secrets in process environments are hidden from it where the "
    "kernel gets its own process namespace). Use --sandbox docker to contain it."
)


def choose_sandbox(settings: Settings, warn: Callable[[str], None] | None = None) -> Settings:
    """Where this run's code runs. `auto`: local for the offline planner, whose code is ours; Docker
    for the LLM planner, whose code a model wrote, and a refusal when no daemon answers, unless the
    user asks for `local` by name (then a one-line warning)."""
    if settings.planner != "llm":
        return settings.model_copy(update={"sandbox": "local"}) if settings.sandbox == "auto" else settings
    if settings.sandbox == "local" and warn is not None:
        warn(LOCAL_LLM_WARNING)
    if settings.sandbox != "auto":
        return settings
    _docker_answers("the llm planner runs model-written code in a Docker sandbox, and")
    return settings.model_copy(update={"sandbox": "docker"})


def _docker_answers(why: str) -> None:
    """Refuse, in one line that says what to do, a Docker sandbox with no daemon to run it, or
    without its image (never pulled: it is built from this project)."""
    try:
        from sandbox.kernels.docker import docker_client

        client = docker_client()
    except Exception as e:
        cause = e.__cause__ or e
        raise ConfigError(
            f"{why} no Docker daemon answers ({str(cause).splitlines()[0][:160]}): start one (Debian: "
            ".ci/docker-setup.sh builds the image too), or pass --sandbox local to run the code on "
            "this machine"
        ) from None
    import docker

    from sandbox.policy import DEFAULT_IMAGE

    try:
        client.images.get(DEFAULT_IMAGE)
    except docker.errors.ImageNotFound:
        raise ConfigError(
            f"{why} the sandbox image {DEFAULT_IMAGE} is not built: run `docker build -t {DEFAULT_IMAGE} .` "
            "in the investigator project (Debian: .ci/docker-setup.sh), or pass --sandbox local"
        ) from None
    except docker.errors.DockerException:
        pass  # the daemon answered: the sandbox server says what else is wrong, if anything is


def check_sandbox(settings: Settings) -> None:
    """Before any work: a Docker sandbox asked for by name needs a daemon that answers."""
    if settings.sandbox == "docker":
        _docker_answers("--sandbox docker runs the analysis in a container, and")


def check_runs_dir(runs_dir: Path) -> None:
    """Before any work: the runs folder must be a folder this process can write in."""
    path = Path(runs_dir)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".write-test-", dir=path)  # unique: runs in threads check at once
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        what = "is a file" if path.is_file() else f"cannot be written ({e.strerror or e})"
        raise ConfigError(
            f"the runs folder {path} {what}: pass --runs-dir (or set INVESTIGATOR_RUNS_DIR) "
            "to a folder you can write"
        ) from None
