"""Code that runs inside every kernel, whatever the backend: the analysis library preloaded, and
the DataFrames of the kernel's namespace pickled into the workspace after each step so that a
kernel that had to be restarted gets them back.

The Docker image holds only the analysis library, so this module is not imported in the kernel:
its source is sent at session start and `install` is called there. It imports nothing of the
sandbox and keeps its helpers in the kernel's namespace under private names.
"""

from __future__ import annotations

from typing import Any


def install(namespace: dict[str, Any], workspace: str, max_bytes: int, sentinel: str) -> None:
    """Preload the library into `namespace` and define `__investigator_persist` / `_restore`."""
    import sys

    packages, state = f"{workspace}/.site-packages", f"{workspace}/.state"
    if packages not in sys.path:
        sys.path.insert(0, packages)
    try:
        exec("from investigator.analysis import *", namespace)
    except Exception as e:
        print(f"investigator.analysis could not be preloaded: {e!r}", file=sys.stderr)

    def persist() -> None:
        import contextlib
        import os

        import pandas as pd

        os.makedirs(state, exist_ok=True)
        saved: dict[str, Any] = namespace.setdefault("__investigator_saved", {})
        frames = {
            k: v for k, v in list(namespace.items()) if not k.startswith("_") and isinstance(v, pd.DataFrame)
        }
        for name, df in frames.items():
            try:
                if df.memory_usage(deep=False).sum() > max_bytes:
                    continue
                try:
                    mark: Any = (id(df), df.shape, int(pd.util.hash_pandas_object(df).sum()))
                except Exception:
                    mark = None  # unhashable cells: save every time
                if mark is None or saved.get(name) != mark:
                    df.to_pickle(f"{state}/{name}.pkl")
                    saved[name] = mark
            except Exception:
                pass
        for name in [k for k in saved if k not in frames]:
            saved.pop(name)
            with contextlib.suppress(OSError):
                os.remove(f"{state}/{name}.pkl")

    def restore() -> None:
        import glob
        import json
        import os

        import pandas as pd

        names = []
        for path in sorted(glob.glob(f"{state}/*.pkl")):
            name = os.path.basename(path)[:-4]
            try:
                namespace[name] = pd.read_pickle(path)
                names.append(name)
            except Exception:
                pass
        print(sentinel + json.dumps(names))

    namespace["__investigator_persist"] = persist
    namespace["__investigator_restore"] = restore
