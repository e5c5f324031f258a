"""Every file a run writes is written whole or not at all (a full disk mid-write)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from investigator.files import write_atomic


def test_a_full_disk_leaves_the_previous_file_and_no_temporary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.html"
    write_atomic(target, "first version")

    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "second version, never complete" * 1000)
    assert target.read_text() == "first version"
    assert [p.name for p in tmp_path.iterdir()] == ["report.html"]
    monkeypatch.undo()
    write_atomic(target, "once space is back")
    assert target.read_text() == "once space is back"
