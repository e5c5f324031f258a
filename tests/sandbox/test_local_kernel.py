"""The local Jupyter kernel: persistence, errors, timeouts, death, secrets."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.kernels.local import LocalKernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    k = LocalKernel(tmp_path_factory.mktemp("ws"))
    k.start()
    yield k
    k.shutdown()


def test_state_persists_across_executions(kernel: LocalKernel) -> None:
    assert kernel.execute("import pandas as pd\ndf = pd.DataFrame({'x': [1, 2, 3]})").ok
    r = kernel.execute("print(df['x'].sum() * 7)")
    assert r.ok and r.stdout.strip() == "42"


def test_exception_is_captured_not_raised(kernel: LocalKernel) -> None:
    r = kernel.execute("{}['missing']")
    assert not r.ok
    assert r.error is not None and r.error.name == "KeyError" and "missing" in r.error.value
    assert any("KeyError" in line for line in r.error.traceback)


def test_infinite_loop_is_interrupted_and_state_survives(kernel: LocalKernel) -> None:
    kernel.execute("survivor = 'still here'")
    r = kernel.execute("while True:\n    pass", timeout=1.5)
    assert r.timed_out and not r.restarted
    assert r.error is not None and r.error.name == "TimeoutError"
    assert 1.4 < r.elapsed_s < 10
    after = kernel.execute("print(survivor)")  # proven by running code, not a health call
    assert after.ok and after.stdout.strip() == "still here"


def test_dead_kernel_is_restarted_and_says_so(kernel: LocalKernel) -> None:
    kernel.execute("doomed = 1")
    r = kernel.execute("import os; os._exit(1)", timeout=20)
    assert r.restarted and r.error is not None and r.error.name == "KernelDied"
    r = kernel.execute("print('alive'); print('doomed' in globals())")
    assert r.ok and r.stdout.split() == ["alive", "False"]


def test_structured_results_and_files(kernel: LocalKernel, tmp_path: Path) -> None:
    r = kernel.execute(
        "from investigator.analysis import emit\nemit({'kind': 'x', 'n': 3})\n"
        "open('note.txt', 'w').write('hi')\nprint('@@ forged result line')"
    )
    assert [(e.label, e.result) for e in r.data] == [(None, {"kind": "x", "n": 3})]
    assert "note.txt" in r.files and "note.txt" in kernel.list_files()


def test_no_secret_reaches_the_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-canary-123")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-canary-456")
    with LocalKernel(tmp_path) as k:
        r = k.execute("import os; print(sorted(os.environ.items()))")
    assert r.ok
    assert "canary" not in r.stdout and "OPENAI_API_KEY" not in r.stdout
