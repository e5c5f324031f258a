"""Spark in local mode through Ibis's PySpark backend: the same answer as the Parquet file it reads.

Pointed at a cluster's master URL the same code runs the aggregations on the cluster."""

from __future__ import annotations

import gc
import json
import os
import re
import shutil
import subprocess
import sys
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


_RUN = """
import json, sys
from pathlib import Path
from investigator.config import load_settings
from investigator.request import build_request
from investigator.runner import investigate
from pyspark.sql import SparkSession

settings = load_settings(sandbox="inprocess", runs_dir=Path(sys.argv[2]))
args = ("revenue", "spark://local[1]", "7d", None, "previous", None, None, None)
request = build_request(*args, table=sys.argv[1])
report = investigate(request, settings)
sc = SparkSession.getActiveSession().sparkContext
env = sc._jsc.sc().env()
hosts = [sc.getConf().get("spark.driver.host"), env.rpcEnv().address().host(),
         env.blockManager().blockManagerId().host()]
print(json.dumps({"hosts": hosts, "causes": len(report.root_causes)}))
"""
# what Spark's JVM prints when nobody quiets it: log4j's start-up lines, WARN lines (Hadoop's
# native library, "your hostname resolves to a loopback address"), the JDK's incubator notice
_JVM_LINE = re.compile(r"\bWARN\b|log4j|NativeCodeLoader|incubator modules|setLogLevel|SPARK_LOCAL_IP")


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_spark_run_is_quiet_and_its_driver_on_loopback(tmp_path: Path) -> None:
    path, _ = write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(path), str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=280, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["causes"] >= 1
    assert got["hosts"] == ["127.0.0.1"] * 3
    assert [line for line in done.stderr.splitlines() if _JVM_LINE.search(line)] == []
