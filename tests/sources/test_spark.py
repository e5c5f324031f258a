"""Spark in local mode through Ibis's PySpark backend: the same answer as the Parquet file it reads.

Pointed at a cluster's master URL the same code runs the aggregations on the cluster."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from investigator.report.model import Report

from ..conftest import write_synth
from .conftest import findings, same
from .test_engines import SCENARIOS, run

pytest.importorskip("pyspark", reason='pyspark is an optional extra: pip install -e ".[spark]"')
if shutil.which("java") is None:
    pytest.skip("Spark needs Java 17 (apt-get install openjdk-17-jre-headless)", allow_module_level=True)


_RUN = """
import json, sys
from pathlib import Path
from investigator.config import load_settings
from investigator.request import build_request
from investigator.runner import investigate
from pyspark.sql import SparkSession

settings = load_settings(sandbox="inprocess", runs_dir=Path(sys.argv[2]))
args = ("revenue", "spark://local[2]", "7d", None, "previous", None, None, None)
request = build_request(*args, table=sys.argv[1])
report = investigate(request, settings)
sc = SparkSession.getActiveSession().sparkContext
env = sc._jsc.sc().env()
hosts = [sc.getConf().get("spark.driver.host"), env.rpcEnv().address().host(),
         env.blockManager().blockManagerId().host()]
print(json.dumps({"hosts": hosts, "report": report.model_dump(mode="json")}))
"""
# what Spark's JVM prints when nobody quiets it: log4j's start-up lines, WARN lines (Hadoop's
# native library, "your hostname resolves to a loopback address"), the JDK's incubator notice
_JVM_LINE = re.compile(r"\bWARN\b|log4j|NativeCodeLoader|incubator modules|setLogLevel|SPARK_LOCAL_IP")


@pytest.mark.long
@pytest.mark.slow
@pytest.mark.timeout(400)
def test_spark_local_gives_the_files_answer_quietly_with_its_driver_on_loopback(tmp_path: Path) -> None:
    """One Spark run (a JVM start is most of its cost) in its own process: the same findings as the
    Parquet file it reads, nothing from the JVM on stderr, and the driver on loopback."""
    cause, kw, metric = SCENARIOS["segment"]
    path, _ = write_synth(tmp_path, cause, **kw)
    reference = run(metric, str(path), tmp_path / "runs")
    env = {k: v for k, v in os.environ.items() if k != "SPARK_LOCAL_IP"}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(path), str(tmp_path / "runs")],
        capture_output=True, text=True, timeout=280, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    spark = Report.model_validate(got["report"])
    assert reference.root_causes and spark.root_causes
    assert same(findings(reference), findings(spark)) == []
    assert got["hosts"] == ["127.0.0.1"] * 3
    assert [line for line in done.stderr.splitlines() if _JVM_LINE.search(line)] == []
