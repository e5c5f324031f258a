"""Kernel code plants links in its workspace; the host never writes, reads, lists or chmods through them.

The workspace is kernel-writable (a bind mount in Docker: a link made in /workspace is seen by the
host), so every name in it may be a link to a host file. Each test points such links at files
outside the workspace that the test owns (mode 0600) or at a path that must not come to exist.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from sandbox import safe_files

from .conftest import Backend, error_text, in_memory, in_memory_kernel, structured

SECRET = "host file: must not change\n"


def _outside(tmp_path: Path) -> tuple[Path, Path]:
    """A host file outside the workspace (mode 0600) and a path that must stay absent."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text(SECRET)
    secret.chmod(0o600)
    return secret, outside / "ghost.txt"


def _untouched(secret: Path, ghost: Path) -> None:
    assert secret.read_text() == SECRET
    assert stat.S_IMODE(secret.lstat().st_mode) == 0o600
    assert not ghost.exists() and not ghost.is_symlink()


def test_long_outputs_big_results_and_figures_never_write_through_planted_links(
    backend: Backend, tmp_path: Path
) -> None:
    secret, ghost = _outside(tmp_path)
    ws = tmp_path / "ws"
    plant = (
        "import os\n"
        f"secret, ghost = {str(secret)!r}, {str(ghost)!r}\n"
        "os.makedirs('outputs', exist_ok=True)\n"
        "for n in range(1, 30):\n"
        "    for suffix in ('', '-1', '-2'):\n"
        "        os.symlink(secret, f'outputs/exec-{n:04d}-stdout{suffix}.txt')\n"
        "        os.symlink(ghost, f'outputs/exec-{n:04d}-stderr{suffix}.txt')\n"
        "        for i in range(3):\n"
        "            os.symlink((secret, ghost)[i % 2], f'outputs/exec-{n:04d}-data{i}{suffix}.json')\n"
    )
    with in_memory_kernel(backend, ws, memory="1g") as k:
        assert k.execute(plant).ok

        long = k.execute("import sys\nprint('A' * 50_000)\nprint('B' * 50_000, file=sys.stderr)")
        assert "characters cut" in long.stdout
        _untouched(secret, ghost)
        saved = [f for f in long.files if f.startswith("outputs/")]
        assert len(saved) == 2, long.files
        for name in saved:
            assert not (ws / name).is_symlink() and (ws / name).read_text().strip() in (
                "A" * 50_000,
                "B" * 50_000,
            )
        assert "a link" in long.stderr and "left untouched" in long.stderr

        big = k.execute("emit(list(range(100_000)), 'big')\nemit(list(range(100_000)), 'big2')")
        _untouched(secret, ghost)
        assert [d.saved_as for d in big.data] == [f for f in big.files if f.endswith(".json")]
        for item in big.data:
            assert item.saved_as is not None and not (ws / item.saved_as).is_symlink()
            assert (ws / item.saved_as).stat().st_size > 500_000

        figure = k.execute(
            "import os, time, matplotlib.pyplot as plt\n"
            f"secret, ghost = {str(secret)!r}, {str(ghost)!r}\n"
            "now = time.time_ns() // 1_000_000\n"
            "for ms in range(now, now + 20_000):\n"
            "    os.symlink((secret, ghost)[ms % 2], f'figure_{ms}.png')\n"
            "plt.plot([1, 2, 3]); plt.show()\n"
        )
        assert figure.ok, figure.text()
        _untouched(secret, ghost)
        shown = next(d for d in figure.displays if d.startswith("[image saved as "))
        png = ws / shown.removeprefix("[image saved as ").removesuffix("]")
        assert not png.is_symlink() and png.read_bytes().startswith(b"\x89PNG")
        assert "a link" in figure.stderr  # the planted name was met and left alone


def test_a_link_in_place_of_the_outputs_folder_is_not_followed(backend: Backend, tmp_path: Path) -> None:
    secret, _ = _outside(tmp_path)
    with in_memory_kernel(backend, tmp_path / "ws", memory="1g") as k:
        k.execute(f"import os\nos.symlink({str(secret.parent)!r}, 'outputs')")
        res = k.execute("print('C' * 50_000)")
    assert "characters cut" in res.stdout and "not saved" in res.stdout
    assert "could not be saved" in res.stderr
    assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.txt"]


@pytest.mark.anyio
async def test_links_are_not_listed_read_or_written_through(backend: Backend, tmp_path: Path) -> None:
    secret, ghost = _outside(tmp_path)
    plant = (
        "import os\n"
        "open('real.txt', 'w').write('real')\n"
        f"os.symlink({str(secret)!r}, 'secret-link.txt')\n"
        "os.symlink('/etc/passwd', 'passwd')\n"
        f"os.symlink({str(secret.parent)!r}, 'outdir')\n"
        f"os.symlink({str(ghost)!r}, 'dangling.txt')\n"
        "os.symlink('real.txt', 'alias.txt')\n"
        "os.mkfifo('pipe')\n"
    )
    async with in_memory(backend) as c:
        sid = structured(await c.call_tool("create_session", {"memory": "1g"}))["session_id"]
        ran = structured(await c.call_tool("execute", {"session_id": sid, "code": plant}))
        assert ran["ok"], ran
        assert ran["files"] == ["real.txt"]  # links (and the FIFO) are no workspace files
        listed = structured(await c.call_tool("list_files", {"session_id": sid}))["files"]
        assert listed == {"real.txt": 4}

        for name in ["secret-link.txt", "passwd", "outdir/secret.txt", "dangling.txt", "alias.txt", "pipe"]:
            refused = await c.call_tool("download_file", {"session_id": sid, "name": name})
            assert refused.is_error, name
            assert SECRET not in error_text(refused) and "root:" not in error_text(refused)
        got = structured(await c.call_tool("download_file", {"session_id": sid, "name": "real.txt"}))
        assert got["text"] == "real"

        for name in ["secret-link.txt", "outdir/new.txt", "dangling.txt", "alias.txt"]:
            up = await c.call_tool("upload_file", {"session_id": sid, "name": name, "text": "pwned"})
            assert up.is_error, name
        _untouched(secret, ghost)
        assert sorted(p.name for p in secret.parent.iterdir()) == ["secret.txt"]
        assert not (await c.call_tool("cleanup", {"session_id": sid})).is_error


@pytest.mark.anyio
async def test_a_planted_workspace_marker_link_is_not_touched(tmp_path: Path) -> None:
    secret, _ = _outside(tmp_path)
    before = secret.stat().st_mtime_ns
    ws = tmp_path / "ws"
    async with in_memory("local") as c:
        sid = structured(await c.call_tool("create_session", {"workspace": str(ws)}))["session_id"]
        swap = (
            f"import os\nos.remove('.sandbox-workspace')\nos.symlink({str(secret)!r}, '.sandbox-workspace')"
        )
        assert structured(await c.call_tool("execute", {"session_id": sid, "code": swap}))["ok"]
        await c.call_tool("cleanup", {"session_id": sid})
        again = await c.call_tool("create_session", {"workspace": str(ws)})
        assert again.is_error and "did not make" in error_text(again)
    assert secret.stat().st_mtime_ns == before
    _untouched(secret, tmp_path / "outside" / "ghost.txt")


def test_safe_files_refuse_links_anywhere_on_the_way(tmp_path: Path) -> None:
    secret, ghost = _outside(tmp_path)
    ws = tmp_path / "ws"
    (ws / "sub").mkdir(parents=True)
    (ws / "up").symlink_to(secret.parent)
    (ws / "sub" / "taken.txt").symlink_to(ghost)
    with pytest.raises(safe_files.UnsafePath):
        safe_files.write_fresh(ws, "up/x.txt", b"x")
    with pytest.raises(safe_files.UnsafePath):
        safe_files.read_regular(ws, "up/secret.txt", 1000)
    with pytest.raises(safe_files.UnsafePath):
        safe_files.write_replacing(ws, "sub/taken.txt", b"x")
    name, odd = safe_files.write_fresh(ws, "sub/taken.txt", b"fresh")
    assert name == "sub/taken-1.txt" and odd == ["sub/taken.txt (a link)"]
    assert stat.S_IMODE((ws / name).stat().st_mode) == 0o644
    with pytest.raises(ValueError):
        safe_files.relative_name("../outside/secret.txt")
    with pytest.raises(ValueError):
        safe_files.relative_name("/etc/passwd")
    assert set(safe_files.file_stats(ws)) == {"sub/taken-1.txt"}
    _untouched(secret, ghost)
