"""A stdio server told its first workspace starts that kernel before the MCP SDK has loaded."""

from __future__ import annotations

from pathlib import Path

from sandbox.sessions import SessionOptions, SessionRegistry, prewarm


def test_prewarmed_kernel_is_adopted_for_its_workspace(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    future = prewarm(ws)
    registry = SessionRegistry("local", tmp_path / "root", warm={ws.resolve(): future})
    try:
        session = registry.create(SessionOptions(workspace=str(ws)))
        assert session.kernel is future.result()  # the same kernel process, not a second one
        r = session.execute("print(type(movement).__name__)")  # the library was preloaded
        assert r.ok and r.stdout.strip() == "function"
        other = registry.create(SessionOptions(workspace=str(tmp_path / "other")))
        assert other.kernel is not session.kernel
    finally:
        registry.close_all()


def test_unused_warm_kernel_and_temp_root_are_cleaned_up(tmp_path: Path) -> None:
    future = prewarm(tmp_path / "never-used")
    registry = SessionRegistry("local", warm={(tmp_path / "never-used").resolve(): future})
    root = registry.root
    kernel = future.result()
    assert kernel.alive() and root.is_dir()
    registry.close_all()
    assert not kernel.alive()
    assert not root.exists()
