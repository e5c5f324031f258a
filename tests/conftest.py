"""Shared fixtures. Real network calls are blocked: only loopback and local sockets are allowed."""

from __future__ import annotations

import atexit
import ipaddress
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from investigator.config import load_settings
from investigator.sources.synth import generate

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

_real_connect = socket.socket.connect

# Runs remember what they found (`.investigator/` in the working directory): never in the checkout,
# and never carried from one test to the next. Session fixtures share one home; each test gets its own.
_SESSION_HOME = tempfile.mkdtemp(prefix="investigator-test-home-")
os.environ["INVESTIGATOR_HOME"] = _SESSION_HOME
atexit.register(shutil.rmtree, _SESSION_HOME, True)
# the private folder (the key that signs approved facts) is never the user's own either; one for the
# session: it is part of the environment that tells one warm helper from another
_SESSION_PRIVATE = tempfile.mkdtemp(prefix="investigator-test-private-")
os.environ["INVESTIGATOR_PRIVATE_DIR"] = _SESSION_PRIVATE
atexit.register(shutil.rmtree, _SESSION_PRIVATE, True)


# The quick tier (`pytest -m quick`, CONTRIBUTING): every test but those below, which each start a
# process, a server, a kernel or an engine (a run as a user starts it, the sandbox, Spark, PostgreSQL,
# a notebook, a browser, a model) or run many investigations; the full suite runs them all. A file is
# left out whole, or one test of it (`file::test`); a test marked `long` or `docker` is never quick.
# The tier still reaches every module (CONTRIBUTING says how that was measured).
NOT_QUICK: tuple[str, ...] = (
    "tests/front/test_cli.py",
    "tests/front/test_cli_contract.py",
    "tests/front/test_filter_runs.py",
    "tests/front/test_early_refusals.py",
    "tests/front/test_text_time_column.py::test_the_cli_refuses_text_that_is_no_dates_in_one_line_before_a_kernel_starts",
    "tests/front/test_text_time_column.py::test_describe_reads_text_that_is_dates_as_today",
    "tests/front/test_grains_cli.py",
    "tests/front/test_markup.py",
    "tests/front/test_mcp_ceilings.py",
    "tests/front/test_mcp_tool.py",
    "tests/front/test_mcp_url_roots.py::test_data_values_in_an_answer_are_bounded_and_marked",
    "tests/front/test_periods.py",
    "tests/front/test_question.py",
    "tests/front/test_refusals.py",
    "tests/front/test_signals.py",
    "tests/inputs/test_bad_values.py::test_an_infinite_value_is_left_out_counted_and_never_crashes",
    "tests/inputs/test_files_and_config.py",
    "tests/inputs/test_identifiers.py::test_an_identifier_column_does_not_hide_the_planted_cause",
    "tests/inputs/test_time_columns.py::test_csv_timestamps_with_utc_offsets_keep_the_day_the_data_writes",
    "tests/kernels/test_mcp.py",
    "tests/kinds/test_driver_tree.py::test_a_database_gives_the_files_split",
    "tests/kinds/test_segment.py::test_a_many_valued_dimension_does_not_hide_the_cause",
    "tests/llm/test_cli_llm.py",
    "tests/llm/test_host_words.py",
    "tests/llm/test_injection.py",
    "tests/llm/test_investigation.py",
    "tests/llm/test_model_steps.py",
    "tests/llm/test_non_finite_share.py",
    "tests/llm/test_real_model.py",
    "tests/llm/test_settings.py::test_the_benchmark_fails_clearly_without_a_server",
    "tests/llm/test_verification_bypass.py",
    "tests/memory/test_approval.py::test_a_fact_written_by_kernel_code_is_never_approved",
    "tests/memory/test_context_and_cli.py",
    "tests/memory/test_flow.py",
    "tests/memory/test_late_fact_scope.py",
    "tests/memory/test_recall_model.py",
    "tests/memory/test_recognition.py::test_after_compaction_the_second_ios_drop_still_says_seen_before",
    "tests/memory/test_store.py",
    "tests/notebook/test_api.py",
    "tests/notebook/test_html.py",
    "tests/notebook/test_magics.py::test_line_magic_takes_the_cli_flags_and_a_dataframe_by_name",
    "tests/notebook/test_notebooks.py",
    "tests/notebook/test_trail.py",
    "tests/planners/test_hard_kinds.py",
    "tests/planners/test_real_shapes.py",
    "tests/planners/test_scenarios.py",
    "tests/report/test_schema.py::test_a_report_follows_the_schema_and_says_what_produced_it",
    "tests/run/test_context.py",
    "tests/run/test_disk_full.py",
    "tests/run/test_load_retry.py",
    "tests/run/test_loop_rules.py",
    "tests/run/test_resume.py",
    "tests/sandbox/test_docker_cleanup.py",
    "tests/sandbox/test_e2e_docker.py",
    "tests/sandbox/test_links.py",
    "tests/sandbox/test_local_kernel.py",
    "tests/sandbox/test_policy.py",
    "tests/sandbox/test_secrets.py",
    "tests/sandbox/test_server_limits.py",
    "tests/sandbox/test_spawn.py",
    "tests/sandbox/test_tools.py",
    "tests/sandbox/test_transports.py",
    "tests/sources/test_credentials.py",
    "tests/sources/test_distinct.py",
    "tests/sources/test_duplicates.py::test_a_copied_block_is_flagged",
    "tests/sources/test_engines.py",
    "tests/sources/test_errors.py",
    "tests/sources/test_measures.py",
    "tests/sources/test_read_only.py",
    "tests/sources/test_reads_no_files.py",
    "tests/sources/test_spark.py",
    "tests/speed/test_kernel_reuse.py",
    "tests/speed/test_refusals.py",
    "tests/speed/test_reset_session.py",
    "tests/speed/test_stats.py",
    "tests/test_interrupts.py",
    "tests/test_nesting.py",
    "tests/test_readme.py",
    "tests/triage/test_config.py",
    "tests/triage/test_job.py",
    "tests/triage/test_notify.py::test_a_secret_the_notifier_percent_encodes_is_masked_in_every_form",
    "tests/triage/test_periods.py::test_a_triage_job_with_avg4",
    "tests/triage/test_sources.py",
    "tests/warm/test_helper.py",
)


def quick(item: pytest.Item) -> bool:
    if item.get_closest_marker("long") or item.get_closest_marker("docker"):
        return False
    where = item.nodeid.split("[", 1)[0]
    return not any(where == out or where.startswith(out + "::") for out in NOT_QUICK)


@pytest.hookimpl(tryfirst=True)  # marked before `-m` selects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests marked `long` (each over ~15 s on 2 cores: a real model, Spark's JVM, a run killed
    and resumed) start first. With `--dist worksteal` (pyproject) the worker that takes them is
    relieved by the other stealing from the end of its queue, so no long test is left to run alone
    at the end of the suite. The others in the quick tier are marked `quick`."""
    for item in items:
        if quick(item):
            item.add_marker(pytest.mark.quick)
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: order kept within


@pytest.fixture(autouse=True)
def _own_memory_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("INVESTIGATOR_HOME", str(tmp_path_factory.mktemp("home")))


def _guarded_connect(self: socket.socket, address: object) -> object:
    if self.family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple):
        host = str(address[0])
        try:
            local = ipaddress.ip_address(host).is_loopback
        except ValueError:
            local = host == "localhost"
        if not local:
            raise ConnectionRefusedError(f"tests may not reach the network ({host})")
    return _real_connect(self, address)  # type: ignore[arg-type]


@pytest.fixture(autouse=True)
def _no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)


@pytest.fixture
def shared() -> Path:
    if not SHARED.exists():
        pytest.skip(
            f"../shared not present beside the project ({SHARED}): shared scenarios are only in the dev tree"
        )
    return SHARED


@pytest.fixture
def settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_settings(runs_dir=tmp_path / "runs")


def write_synth(folder: Path, cause: str, **kw: object) -> tuple[Path, dict[str, Any]]:
    frame, truth = generate(cause, **kw)  # type: ignore[arg-type]
    path = folder / f"{cause}.parquet"
    frame.to_parquet(path, index=False)
    return path, truth


@pytest.fixture
def segment_drop(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    return write_synth(tmp_path, "segment_change", seed=3, segment={"channel": "social"}, factor=0.5)


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m investigator ARGS`, as a user runs it: its exit code and what it printed."""
    return subprocess.run(
        [sys.executable, "-m", "investigator", *args],
        capture_output=True, text=True, timeout=300, env={**os.environ, **(env or {})}, cwd=cwd,
    )  # fmt: skip
