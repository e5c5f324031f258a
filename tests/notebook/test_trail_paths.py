"""The trail notebook reads only the kernel's own figures: a name the kernel prints is never a way
to put a host file into an artifact people share."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from investigator.report.trail import outputs_of, read_workspace_file
from sandbox.models import ExecResult

PNG = b"\x89PNG\r\n\x1a\nfake"


def workspace_with_secret(tmp_path: Path) -> tuple[Path, Path]:
    ws = tmp_path / "workspace"
    (ws / "figs").mkdir(parents=True)
    (ws / "figure_1.png").write_bytes(PNG)
    secret = tmp_path / "outside" / "shadow"
    secret.parent.mkdir()
    secret.write_text("root:SECRET-HASH:19000:0:99999:7:::\n")
    (ws / "figure_link.png").symlink_to(secret)  # planted by kernel code
    (ws / "figs" / "up").symlink_to(secret.parent, target_is_directory=True)
    return ws, secret


def test_only_regular_files_inside_the_workspace_are_read(tmp_path: Path) -> None:
    ws, secret = workspace_with_secret(tmp_path)
    assert read_workspace_file(ws, "figure_1.png") == PNG
    for name in [str(secret), "figure_link.png", "figs/up/shadow", "../outside/shadow", "figs", ""]:
        assert read_workspace_file(ws, name) is None, name


def test_a_kernel_named_host_file_never_reaches_the_notebook(tmp_path: Path) -> None:
    ws, secret = workspace_with_secret(tmp_path)
    shown = [
        f"[image saved as {n}]" for n in (str(secret), "figure_link.png", "figs/up/shadow", "figure_1.png")
    ]
    outs = outputs_of(ExecResult(ok=True, displays=shown), ws, count=1)
    text = json.dumps(outs)
    assert "SECRET-HASH" not in text and base64.b64encode(secret.read_bytes()).decode() not in text
    assert sum("image not included" in o["data"]["text/plain"] for o in outs) == 3
    assert outs[3]["data"]["image/png"] == base64.b64encode(PNG).decode()
