"""Text from the data on the terminal is text: a segment value or a column name that looks like rich
markup (`[/]US[bold red]`) is shown as written, in the summary, the live line, resume, triage and the
facts list, and never crashes a finished run (it did: exit 1 and a traceback after the run)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml

from investigator.sources.synth import generate

VALUE, COLUMN = "[/]US[bold red]", "[bold]chan[/]"


def cli(*args: str, cwd: Path, tty: bool = False) -> subprocess.CompletedProcess[str]:
    """The real command; with `tty`, stderr is a terminal, so the live progress line is drawn."""
    env = {**os.environ, "COLUMNS": "250", "INVESTIGATOR_WARM": "0", "INVESTIGATOR_HOME": str(cwd / "home")}
    if not tty:
        return subprocess.run(
            [sys.executable, "-m", "investigator", *args],
            capture_output=True, text=True, timeout=300, env=env, cwd=cwd,
        )  # fmt: skip
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "investigator", *args],
        stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL, text=True, env=env, cwd=cwd,
    )  # fmt: skip
    os.close(slave)
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=300)
    reader.join(timeout=10)
    os.close(master)
    err = b"".join(chunks).decode(errors="replace")
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    frame, _ = generate("segment_change", seed=11, segment={"country": "DE"}, factor=0.5)
    frame["country"] = frame["country"].replace({"DE": VALUE})
    root = tmp_path_factory.mktemp("markup")
    frame.rename(columns={"channel": COLUMN}).to_csv(root / "sales.csv", index=False)
    return root


@pytest.mark.long
def test_a_segment_value_and_a_column_name_that_look_like_markup_are_shown_as_written(folder: Path) -> None:
    r = cli("--data", "sales.csv", "--metric", "revenue", "--runs-dir", "runs", cwd=folder, tty=True)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr and "MarkupError" not in r.stderr
    assert f'country="{VALUE}"' in r.stdout  # the panel, the causes and the segments table
    assert f'"{COLUMN}"=' in r.stdout and f"platform, {COLUMN}, category" in r.stdout
    run_id = re.search(r"run (\d{8}-\d{6}-\w+)", r.stdout)
    assert run_id, r.stdout

    again = cli("resume", run_id.group(1), "--runs-dir", "runs", cwd=folder)
    assert again.returncode == 0, again.stderr[-3000:]
    assert f'country="{VALUE}"' in again.stdout


def test_the_facts_list_shows_a_fact_that_looks_like_markup_as_written(folder: Path) -> None:
    facts = folder / "home" / "facts"
    facts.mkdir(parents=True, exist_ok=True)
    (facts / "revenue.md").write_text(f"# Facts: revenue\n\n- [note metrics=revenue] {VALUE} lands late.\n")
    r = cli("facts", "list", cwd=folder)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f"{VALUE} lands late." in r.stdout


def test_triage_prints_a_segment_that_looks_like_markup_as_written(folder: Path) -> None:
    config = {
        "data": str(folder / "sales.csv"),
        "time_column": "date",
        "window": "7d",
        "dimensions": ["country"],
        "metrics": ["revenue"],
        "scan_segments": ["country"],
        "state": str(folder / "triage.sqlite"),
    }
    (folder / "triage.yaml").write_text(yaml.safe_dump(config))
    r = cli("triage", "--config", "triage.yaml", "--dry-run", cwd=folder)
    assert r.returncode == 0, r.stderr[-3000:]
    assert f'country="{VALUE}"' in r.stdout
