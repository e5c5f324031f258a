"""Every module of the package and the sandbox imports, in a fresh interpreter: the quick tier
(`pytest -m quick`) reaches each module at least here, so a module no quick test runs still fails
the edit-test loop when it cannot be imported."""

from __future__ import annotations

import subprocess
import sys

from .test_architecture import PACKAGE, modules


def test_every_module_of_the_package_and_the_sandbox_imports() -> None:
    names = sorted(n for n in modules() if n != "investigator.__main__")  # that one runs the command
    names += sorted(
        ".".join(p.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(".__init__")
        for p in (PACKAGE.parent / "sandbox").rglob("*.py")
        if p.name != "__main__.py"
    )
    code = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    r = subprocess.run([sys.executable, "-c", code, *names], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr[-3000:]
    assert len(names) > 200
