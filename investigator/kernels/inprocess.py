"""Run code in this Python process: no isolation and no timeouts.

For fast tests of the loop's rules and as the 'direct' baseline in benchmarks; never the default.
"""

from __future__ import annotations

import contextlib
import io
import time
import traceback
from pathlib import Path
from typing import Any

from investigator.analysis.emit import collecting
from sandbox.models import Emitted, ExecError, ExecResult


class InProcessKernel:
    def __init__(self, workdir: Path | None = None) -> None:
        self.workdir = Path(workdir) if workdir else None
        self.namespace: dict[str, Any] = {}

    def start(self) -> None:
        self.namespace = self.namespace or {"__name__": "__investigation__"}

    def execute(self, code: str, timeout: float = 60.0) -> ExecResult:
        out, err = io.StringIO(), io.StringIO()
        started = time.monotonic()
        error = None
        with collecting() as emitted:
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), self._in_workdir():
                    exec(compile(code, "<cell>", "exec"), self.namespace)
            except Exception as e:
                error = ExecError(
                    name=type(e).__name__, value=str(e), traceback=traceback.format_exc().splitlines()
                )
        return ExecResult(
            ok=error is None,
            stdout=out.getvalue(),
            stderr=err.getvalue(),
            error=error,
            data=[Emitted.model_validate(item) for item in emitted],
            elapsed_s=time.monotonic() - started,
        )

    def _in_workdir(self) -> contextlib.AbstractContextManager[object]:
        """Files the code writes land in the workspace, as in a real kernel (not in our cwd)."""
        if self.workdir is None:
            return contextlib.nullcontext()
        self.workdir.mkdir(parents=True, exist_ok=True)
        return contextlib.chdir(self.workdir)

    def list_files(self) -> list[str]:
        if self.workdir is None or not self.workdir.exists():
            return []
        return sorted(str(p.relative_to(self.workdir)) for p in self.workdir.rglob("*") if p.is_file())

    def data_path(self, host_path: str) -> str:
        return str(Path(host_path).resolve())

    def shutdown(self) -> None:
        self.namespace = {}
