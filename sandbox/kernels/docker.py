"""A persistent IPython kernel in a locked-down Docker container.

How the kernel is reached: the container has no network at all (`network_mode="none"`), so its
ZMQ sockets cannot be published as ports. Instead the kernel binds them as IPC (Unix socket) files
in a small host folder mounted at /run/kernel, and the host's `jupyter_client` connects to those
files. That keeps the one execute loop of `jupyter.py` (deadline, interrupt, death detection) for
every backend, costs no `docker exec` per call, and needs no open port.

Containers carry labels naming their owner process; they are removed on shutdown, at process exit,
and by `sweep_orphans` (run when a backend starts) when their owner is gone.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import secrets
import shutil
import socket
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from jupyter_client.blocking.client import BlockingKernelClient

from sandbox.kernels.jupyter import INLINE, JupyterKernel
from sandbox.policy import DEFAULT_IMAGE

__all__ = ["DEFAULT_IMAGE", "DockerKernel", "docker_client", "sweep_orphans"]

LABEL = "investigator.sandbox"
CONTAINER_UID = 1000
_PORTS = {"shell_port": 1, "iopub_port": 2, "stdin_port": 3, "control_port": 4, "hb_port": 5}


def docker_client() -> Any:
    """A client for the local daemon; a `RuntimeError` saying what to do when none answers."""
    import docker

    try:
        client = docker.from_env(version="auto", timeout=60)
        client.ping()
    except docker.errors.DockerException as exc:
        raise RuntimeError(
            f"no Docker daemon answers ({exc}); start one (on Debian: .ci/docker-setup.sh) "
            "or use the local sandbox"
        ) from exc
    return client


def _owner() -> str:
    """This process, as `host:pid:start-time`, so a recycled pid is not mistaken for its owner."""
    return f"{socket.gethostname()}:{os.getpid()}:{_start_time(os.getpid())}"


def _start_time(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return "?"


def _owner_alive(owner: str) -> bool:
    host, _, rest = owner.partition(":")
    pid, _, started = rest.partition(":")
    if host != socket.gethostname():
        return True  # another machine's container on a shared daemon: not ours to judge
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return _start_time(int(pid)) == started


def sweep_orphans(client: Any) -> list[str]:
    """Remove sandbox containers whose owner process is gone (left by a crashed run)."""
    removed = []
    for c in client.containers.list(all=True, filters={"label": LABEL}):
        if not _owner_alive(c.labels.get(f"{LABEL}.owner", "")):
            c.remove(force=True)
            removed.append(c.name)
            for m in c.attrs.get("Mounts", []):  # the crashed owner's socket folder
                if m.get("Destination") == "/run/kernel" and "/inv-k-" in m.get("Source", ""):
                    shutil.rmtree(m["Source"], ignore_errors=True)
    return removed


class _Registry:
    """The containers this process started (and their socket folders), removed at exit."""

    def __init__(self) -> None:
        self.live: dict[str, tuple[Any, Path]] = {}
        self.lock = threading.Lock()
        atexit.register(self.remove_all)

    def add(self, container: Any, runtime: Path) -> None:
        with self.lock:
            self.live[container.id] = (container, runtime)

    def discard(self, container: Any) -> None:
        with self.lock:
            self.live.pop(container.id, None)

    def remove_all(self) -> None:
        with self.lock:
            doomed, self.live = list(self.live.values()), {}
        for container, runtime in doomed:
            with contextlib.suppress(Exception):  # best effort at exit
                container.remove(force=True)
            shutil.rmtree(runtime, ignore_errors=True)


_REGISTRY = _Registry()


class DockerKernel(JupyterKernel):
    """A kernel in a container: no network, non-root, limited, read-only root, no host env."""

    workspace_path = "/workspace"

    def __init__(
        self,
        workdir: Path,
        image: str = DEFAULT_IMAGE,
        memory: str = "2g",
        cpus: float = 1.0,
        pids: int = 256,
        network: bool = False,
        mounts: dict[str, str] | None = None,
        startup_timeout: float = 60.0,
        client: Any = None,
    ) -> None:
        super().__init__(workdir)
        self.image, self.memory, self.cpus, self.pids = image, memory, cpus, pids
        self.network = network
        self.mounts = dict(mounts or {})  # host file -> path inside (read-only)
        self.startup_timeout = startup_timeout
        self.client = client or docker_client()
        self.container: Any = None
        self._runtime: Path | None = None
        self._uid = CONTAINER_UID if os.getuid() == 0 else os.getuid()
        self._gid = CONTAINER_UID if os.getuid() == 0 else os.getgid()

    # lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        if self.kc is not None:  # already running
            return
        self._check_image()
        # /tmp is short enough for Unix socket paths (at most 107 bytes)
        self._runtime = Path(tempfile.mkdtemp(prefix="inv-k-", dir="/tmp"))
        info = {
            **_PORTS,
            "transport": "ipc",
            "ip": "/run/kernel/k",
            "key": secrets.token_hex(32),
            "signature_scheme": "hmac-sha256",
            "kernel_name": "python3",
        }
        (self._runtime / "connection.json").write_text(json.dumps(info))
        self._own(self._runtime, 0o700)
        self._own(self.workdir, 0o755)
        volumes = {
            str(self.workdir.resolve()): {"bind": "/workspace", "mode": "rw"},
            str(self._runtime): {"bind": "/run/kernel", "mode": "rw"},
        }
        for host, inside in self.mounts.items():
            volumes[str(Path(host).resolve())] = {"bind": inside, "mode": "ro"}
        # `create`, not `run`: `run` pulls an image that is not here; the sandbox never pulls
        self.container = self._create(
            self.image,
            detach=True,
            name=f"investigator-sandbox-{secrets.token_hex(4)}",
            labels={LABEL: "1", f"{LABEL}.owner": _owner()},
            user=f"{self._uid}:{self._gid}",
            environment={"HOME": "/home/sandbox", "MPLBACKEND": INLINE},  # nothing from the host
            network_mode="bridge" if self.network else "none",
            mem_limit=self.memory,
            memswap_limit=self.memory,
            nano_cpus=int(self.cpus * 1e9),
            pids_limit=self.pids,
            read_only=True,
            tmpfs={
                "/tmp": "rw,nosuid,nodev,size=512m",
                "/home/sandbox": f"rw,nosuid,nodev,size=64m,uid={self._uid},gid={self._gid}",
            },
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            init=True,
            volumes=volumes,
            working_dir="/workspace",
        )
        _REGISTRY.add(self.container, self._runtime)
        self.container.start()
        self.kc = BlockingKernelClient()
        self.kc.load_connection_info({**info, "ip": str(self._runtime / "k")})
        self._wait_for_sockets()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=self.startup_timeout)

    def _create(self, image: str, **kwargs: Any) -> Any:
        import docker

        try:
            return self.client.containers.create(image, **kwargs)
        except docker.errors.ImageNotFound:  # removed since _check_image: still no pull
            self._check_image()
            raise

    def _check_image(self) -> None:
        """The image must be on this machine already: a missing one is an error, never a pull."""
        import docker

        try:
            self.client.images.get(self.image)
        except docker.errors.ImageNotFound:
            raise RuntimeError(
                f"image {self.image!r} is not present on this machine and the sandbox never pulls "
                "images; build it (.ci/docker-setup.sh) or load it with docker first"
            ) from None

    def _wait_for_sockets(self) -> None:
        assert self._runtime is not None
        deadline = time.monotonic() + self.startup_timeout
        while not all((self._runtime / f"k-{p}").exists() for p in _PORTS.values()):
            if time.monotonic() > deadline or not self.alive():
                logs = self.container.logs(tail=20).decode(errors="replace")
                self.shutdown()
                raise RuntimeError(f"the sandbox container did not start its kernel:\n{logs}")
            time.sleep(0.05)

    def _own(self, path: Path, mode: int) -> None:
        """Let the container's non-root user write where it must (we may be root here)."""
        path.chmod(mode)
        if os.getuid() == 0:
            os.chown(path, self._uid, self._gid)

    def shutdown(self) -> None:
        if self.kc is not None:
            self.kc.stop_channels()
        if self.container is not None:
            with contextlib.suppress(Exception):  # already gone is fine
                self.container.remove(force=True)
            _REGISTRY.discard(self.container)
        if self._runtime is not None:
            shutil.rmtree(self._runtime, ignore_errors=True)
        self.kc = self.container = self._runtime = None

    def _interrupt(self) -> None:
        """SIGINT to the kernel through docker-init, which forwards it (the kernel keeps state)."""
        if self.container is not None:
            with contextlib.suppress(Exception):  # a dead container is noticed by alive()
                self.container.kill(signal="SIGINT")

    def alive(self) -> bool:
        if self.container is None:
            return False
        try:
            self.container.reload()
        except Exception:
            return False
        return bool(self.container.status == "running")

    def data_path(self, host_path: str) -> str:
        resolved = str(Path(host_path).resolve())
        if resolved not in {str(Path(h).resolve()) for h in self.mounts}:
            raise KeyError(f"{host_path} is not mounted in this sandbox")
        return next(v for h, v in self.mounts.items() if str(Path(h).resolve()) == resolved)

    def confinement(self) -> dict[str, Any]:
        """What the daemon says about this container's confinement (for tests and reports)."""
        assert self.container is not None
        self.container.reload()
        host = self.container.attrs["HostConfig"]
        return {
            "network_mode": host["NetworkMode"],
            "read_only": host["ReadonlyRootfs"],
            "cap_drop": host["CapDrop"],
            "pids_limit": host["PidsLimit"],
            "memory": host["Memory"],
            "user": self.container.attrs["Config"]["User"],
        }
