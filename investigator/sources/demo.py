"""The bundled demo: a sales table with a planted cause, generated deterministically on first use."""

from __future__ import annotations

import os
from pathlib import Path

from investigator.sources.synth import generate

DEMO_SEGMENT = {"channel": "paid_search"}
DEMO_VERSION = 2


def demo_path() -> Path:
    """Path of the demo Parquet file, written once into the user cache folder."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "investigator"
    path = cache / f"demo-sales-v{DEMO_VERSION}.parquet"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        frame, _ = generate("segment_change", seed=7, segment=DEMO_SEGMENT, factor=0.55)
        tmp = path.with_suffix(".tmp")
        frame.to_parquet(tmp, index=False)
        tmp.replace(path)
    return path
