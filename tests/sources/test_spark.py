"""Spark in local mode through Ibis's PySpark backend: the same answer as the Parquet file it reads.

Pointed at a cluster's master URL the same code runs the aggregations on the cluster."""

from __future__ import annotations

import gc
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import write_synth
from .conftest import findings, same
from .test_engines import SCENARIOS, run

# py4j's gateway sockets belong to the Spark session, which stays up for the process by design
pytestmark = pytest.mark.filterwarnings(
    "ignore:Exception ignored in. <socket.socket:pytest.PytestUnraisableExceptionWarning"
)

pytest.importorskip("pyspark", reason='pyspark is an optional extra: pip install -e ".[spark]"')
if shutil.which("java") is None:
    pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless)", allow_module_level=True)


@pytest.fixture(autouse=True, scope="module")
def _spark_stopped_after() -> Iterator[None]:
    """The product keeps one Spark session per process; a test process stops it, and the py4j
    gateway with its sockets, before other tests run in the same worker."""
    yield
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    gateway = SparkContext._gateway
    if gateway is not None:
        jvm = getattr(gateway, "proc", None)  # the JVM pyspark launched, its stdin a pipe
        gateway.shutdown()
        SparkContext._gateway = None
        SparkContext._jvm = None
        if jvm is not None:
            if jvm.stdin is not None:
                jvm.stdin.close()  # the JVM exits when its parent's pipe closes
            jvm.wait(timeout=60)
    gc.collect()


@pytest.mark.slow
@pytest.mark.timeout(240)
def test_spark_local_gives_the_files_answer(tmp_path: Path) -> None:
    cause, kw, metric = SCENARIOS["segment"]
    path, _ = write_synth(tmp_path, cause, **kw)
    reference = run(metric, str(path), tmp_path / "runs")
    got = run(metric, "spark://local[2]", tmp_path / "runs", table=str(path))
    assert reference.root_causes
    assert same(findings(reference), findings(got)) == []
