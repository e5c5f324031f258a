"""A local kernel that does not come up leaves no folder behind (nor a process to reap)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

import sandbox.kernels.local as local


def test_a_kernel_that_dies_at_start_leaves_no_runtime_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made: list[Path] = []
    real = tempfile.mkdtemp

    def mkdtemp(prefix: str) -> str:
        made.append(Path(real(prefix=prefix)))
        return str(made[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)  # the module local.py uses
    monkeypatch.setattr(local, "own_pid_namespace", lambda: ["/bin/false"])  # the kernel dies at once
    kernel = local.LocalKernel(tmp_path / "ws")
    with pytest.raises(RuntimeError, match="died"):
        kernel.start()
    assert len(made) == 1 and not made[0].exists()
    assert kernel.km is None and kernel.kc is None
