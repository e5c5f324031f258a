"""The HTML report: what it shows, in which order, self-contained; and in a real headless Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from investigator import investigate
from investigator.front.notebook import Investigation
from investigator.sources.synth import generate

from .chromium import find_chromium, open_page

CHARTS = ("chart-metric", "chart-contributions")
TREE = (*CHARTS, "chart-drivers")  # revenue has a driver tree (sessions x conversion x aov): its bridge


def _charts_in(page: str) -> dict[str, int]:
    """Each chart's embedded PNG size in bytes (base64 length * 3/4)."""
    found = re.findall(
        r'<img id="([\w-]+)" class="inv-chart" alt="[^"]*" src="data:image/png;base64,([^"]+)"', page
    )
    return {name: len(data) * 3 // 4 for name, data in found}


def test_conclusion_first_then_charts_hypotheses_and_a_folded_trail(planted_run: Investigation) -> None:
    page = planted_run._repr_html_()
    order = [page.index(s) for s in (planted_run.conclusion[:40], *TREE, "Root causes", "Hypotheses",
                                     '<details class="inv-trail">')]  # fmt: skip
    assert order == sorted(order)
    assert all(size > 5_000 for size in _charts_in(page).values()) and set(_charts_in(page)) == set(TREE)
    assert "confidence high" in page and "CONFIRMED" in page and "RULED_OUT" in page
    assert "<details open" not in page  # the trail starts folded


def test_the_file_is_self_contained(run_folder: Path) -> None:
    page = (run_folder / "report.html").read_text()
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page) and "<script" not in page
    assert set(_charts_in(page)) == set(TREE)


def test_charts_for_a_ratio_metric(tmp_path: Path) -> None:
    frame, _ = generate("mix_shift", seed=2)
    inv = investigate(frame, metric="revenue/orders", runs_dir=tmp_path, sandbox="inprocess", quiet=True)
    page = (inv.folder / "report.html").read_text()
    assert set(_charts_in(page)) == set(CHARTS)
    assert "mix + rate" in page  # the bridge splits the ratio's change, not the numerator's


CHECK = """JSON.stringify({
  charts: [...document.querySelectorAll('img.inv-chart')].map(i => ({
    id: i.id, loaded: i.complete && i.naturalWidth > 0, width: i.getBoundingClientRect().width})),
  conclusion: document.querySelector('.inv-conclusion').innerText,
  trailOpen: document.querySelector('details.inv-trail').open,
  rows: document.querySelectorAll('table tbody tr').length})"""


def test_report_opens_in_headless_chromium(planted_run: Investigation) -> None:
    binary = find_chromium()
    if binary is None:
        pytest.skip("no chromium binary on PATH (Debian: apt-get install -y chromium)")
    import json

    shot = planted_run.folder / "report-screenshot.png"
    page = open_page(binary, (planted_run.folder / "report.html").resolve().as_uri(), shot, CHECK)
    assert page.errors == []
    assert all(u.startswith(("file:", "data:")) for u in page.requests), page.requests
    seen = json.loads(page.value)
    assert [c["id"] for c in seen["charts"]] == list(TREE)
    assert all(c["loaded"] and c["width"] > 400 for c in seen["charts"]), seen["charts"]
    assert seen["conclusion"] == planted_run.conclusion and seen["trailOpen"] is False
    assert seen["rows"] >= len(planted_run.hypotheses)
    assert shot.stat().st_size > 20_000  # kept under the run folder as the test's artifact
    print(f"screenshot: {shot}")


def test_markup_in_the_data_is_text_on_the_page(tmp_path: Path) -> None:
    """A dimension value is data: on the page it is escaped text, never an element."""
    hostile = '<img src=x onerror="alert(1)">'
    frame, _ = generate("segment_change", seed=8, segment={"channel": "social"}, factor=0.4)
    frame["channel"] = frame["channel"].replace("social", hostile)
    inv = investigate(frame, metric="revenue", dimensions=["channel"], runs_dir=tmp_path / "runs", quiet=True)
    page = (inv.folder / "report.html").read_text()
    assert inv.root_causes[0].segment == {"channel": hostile}
    assert hostile not in page and "&lt;img src=x onerror=&#34;alert(1)&#34;&gt;" in page
    notebook = json.loads((inv.folder / "investigation.ipynb").read_text())
    prose = "".join("".join(c["source"]) for c in notebook["cells"] if c["cell_type"] == "markdown")
    assert "<img" not in prose and "&lt;img src=x onerror=" in prose  # markdown renders HTML: escaped
    report_md = (inv.folder / "report.md").read_text()
    assert "<img" not in report_md and "&lt;img src=x onerror=" in report_md


def test_a_single_series_has_no_one_bar_bridge(tmp_path: Path) -> None:
    """No dimension splits the change: the page shows the metric's chart and no bridge of one bar."""
    import numpy as np
    import pandas as pd

    from investigator import investigate

    days = pd.date_range("2026-01-01", "2026-03-29", freq="D")
    deaths = np.random.default_rng(2).poisson(85, len(days)).astype(float)
    deaths[-7:] *= 1.5
    inv = investigate(pd.DataFrame({"date": days, "deaths": deaths}), metric="deaths", window="7d",
                      runs_dir=tmp_path, sandbox="inprocess", quiet=True)  # fmt: skip
    page = (inv.folder / "report.html").read_text()
    assert inv.status == "concluded" and 'id="chart-metric"' in page
    assert 'id="chart-contributions"' not in page
