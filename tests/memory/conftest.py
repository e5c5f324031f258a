"""Memory tests keep their `.investigator/` in a temporary folder, never the working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from investigator.config import Settings, load_settings
from investigator.memory import ledger
from investigator.memory.embed import Embedder, default_embedder


def write_ledger(home: Path, topic: str, lines: list[str]) -> None:
    """`facts/<topic>.md` with these lines as a person approved them: each fact with its mark."""
    from investigator.memory import approval

    secret = approval.key(create=True)
    assert secret is not None
    out = []
    for line in lines:
        fact = ledger.parse_line(line, topic)
        out.append(line if fact is None else ledger.signed(fact, topic, secret)[0])
    (home / "facts").mkdir(parents=True, exist_ok=True)
    (home / "facts" / f"{topic}.md").write_text("\n".join(out) + "\n")


@pytest.fixture(autouse=True)
def _home_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("INVESTIGATOR_HOME", str(home))
    return home


@pytest.fixture
def home(_home_in_tmp: Path) -> Path:
    return _home_in_tmp


@pytest.fixture
def msettings(tmp_path: Path, home: Path) -> Settings:
    return load_settings(runs_dir=tmp_path / "runs", home=home, sandbox="inprocess")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The real offline model (loads in well under a second), shared by the session."""
    return default_embedder()
