"""A canary password given on the command line or through `env:VAR` is found nowhere a run writes
(state, outputs, trail notebook, report, extract), nowhere the CLI prints, and not in the kernel's
environment: the kernel gets aggregates in a file, never a connection."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from investigator.config import load_settings
from investigator.factories import make_kernel
from investigator.run.state import load

from ..conftest import cli, write_synth
from .conftest import CANARY, Postgres, load_postgres


def leaks(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if p.is_file() and CANARY.encode() in p.read_bytes()]


@pytest.mark.long
@pytest.mark.timeout(400)
def test_canary_password_stays_on_the_host(
    postgres: Postgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, truth = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    load_postgres(postgres, "sales_canary", pd.read_parquet(path))
    runs, out = tmp_path / "runs", tmp_path / "report.json"

    r = cli("--data", postgres.url(), "--table", "sales_canary", "--metric", "revenue", "--sandbox", "local",
            "--runs-dir", str(runs), "--json", str(out))  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert CANARY not in r.stdout + r.stderr
    report = json.loads(out.read_text())
    assert report["root_causes"][0]["segment"] == truth["causes"][0]["segment"]
    folder = runs / report["run_id"]
    assert leaks(folder) == [] and CANARY not in out.read_text()
    assert load(folder).request.data == f"postgres://analyst@{postgres.host}:{postgres.port}/shop"

    r = cli("--data", "env:SHOP_DB_URL", "--table", "sales_canary", "--metric", "revenue", "--quiet",
            "--runs-dir", str(runs), env={"SHOP_DB_URL": postgres.url()})  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert CANARY not in r.stdout + r.stderr and leaks(runs) == []

    # the kernel a run starts, with the URL in the host's environment: not in the kernel's
    monkeypatch.setenv("SHOP_DB_URL", postgres.url())
    settings = load_settings(sandbox="local", runs_dir=runs)
    kernel = make_kernel(settings, folder, load(folder).data_path)
    kernel.start()
    try:
        seen = kernel.execute("import os\nprint(sorted(os.environ.items()))", timeout=60).text()
    finally:
        kernel.shutdown()
    assert "PATH" in seen and CANARY not in seen and "SHOP_DB_URL" not in seen
