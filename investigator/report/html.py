"""The report as HTML: a fragment for Jupyter (`_repr_html_`) and the same as one self-contained file.

Conclusion and confidence first, then the metric over time and the bridge of segment changes
(embedded PNGs), root causes, the hypothesis table, and the findings trail folded in `<details>`.
No scripts and nothing fetched: the file's Content-Security-Policy forbids any request.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import NamedTuple

import jinja2

from investigator.files import write_atomic
from investigator.fmt import num, pct, seg
from investigator.report.charts import ChartData, bridge_chart, chart_data, metric_chart
from investigator.report.model import Report
from investigator.report.recalled import previously_found
from investigator.report.tables import DRIVER_COLUMNS, driver_rows, segment_cells, signed
from investigator.run.checks import Aggregates
from investigator.run.state import RunState, load

REPORT_FILE = "report.html"
_BODY, _END = '<body style="margin:0;background:#fff">\n', "\n</body></html>\n"
CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"
CSS = """
.inv-report{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
  color:#1f2328;background:#fff;max-width:980px;padding:16px 20px;line-height:1.45;font-size:14px}
.inv-report h2{font-size:20px;margin:0 0 6px}
.inv-report h3{font-size:15px;margin:22px 0 6px}
.inv-report .inv-conclusion{font-size:16px;font-weight:600;margin:6px 0}
.inv-report .inv-meta,.inv-report .inv-foot{color:#59636e;font-size:12.5px}
.inv-report .inv-warn{color:#8a5300;font-weight:600}
.inv-report .inv-badge{display:inline-block;border-radius:10px;padding:1px 9px;font-size:12px;
  font-weight:600;margin-right:6px;color:#fff;background:#8a8f98}
.inv-report .conf-high,.inv-report .st-CONFIRMED{background:#2f7d4a}
.inv-report .conf-medium,.inv-report .st-INVESTIGATING{background:#b7791f}
.inv-report .conf-low,.inv-report .st-RULED_OUT{background:#a33a2a}
.inv-report .st-NOT_TESTABLE{background:#777}
.inv-report .st-PENDING{background:#8a8f98}
.inv-report figure{margin:12px 0}
.inv-report figure img{max-width:100%;height:auto;display:block}
.inv-report figcaption{color:#59636e;font-size:12px}
.inv-report table{border-collapse:collapse;width:100%;font-size:13px;table-layout:auto;margin:0}
.inv-report th,.inv-report td{border-bottom:1px solid #d8dee4;padding:4px 8px;text-align:left;
  vertical-align:top}
.inv-report th{background:#f6f8fa}
.inv-report details{margin:8px 0}
.inv-report summary{cursor:pointer;font-weight:600}
.inv-report pre{background:#f6f8fa;padding:8px;overflow-x:auto;font-size:12px}
.inv-report ol li{margin:6px 0}
"""


@functools.cache
def _templates() -> jinja2.Environment:
    """Templates shipped in the package; every value is escaped unless marked safe."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("investigator.report", "templates"),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )
    env.globals.update(num=num, pct=pct, seg=seg, signed=signed, segment_cells=segment_cells,
                       driver_rows=driver_rows, driver_columns=DRIVER_COLUMNS)  # fmt: skip
    return env


def fragment(report: Report, state: RunState | None = None, charts: ChartData | None = None) -> str:
    """The report as an HTML fragment with its own scoped styles (what a notebook shows)."""
    m = report.movement
    sig = "" if m.significant is None else (", significant" if m.significant else ", not significant")
    return (
        _templates()
        .get_template("fragment.html.j2")
        .render(
            r=report,
            m=m,
            css=CSS,
            significance=sig,
            charts=_charts(charts),
            recalled=previously_found(getattr(report, "recalled", [])),
            decisions=state.decisions if state else [],
            footer=_footer(report),
        )
    )


def document(body: str, title: str) -> str:
    """A complete, self-contained page around a fragment."""
    head = _templates().get_template("page.html.j2").render(csp=CSP, title=title)
    return f"{head}\n{_BODY}{body}{_END}"


def build(report: Report, folder: Path, computed: Aggregates | None = None) -> str:
    """The report fragment of a run folder, with charts drawn from the run's data (from what the
    run's cause check computed of it, when given and for the same spec)."""
    state = load(folder) if (folder / "state.json").exists() else None
    charts = None
    if state is not None:
        causes = state.conclusion.root_causes if state.conclusion else []
        same = computed if computed is not None and computed.spec == state.spec else None
        reuse = (same.table, same.daily, same.cube) if same is not None else None
        charts = chart_data(state.data_path, state.spec, causes, state.evidence, reuse)
    return fragment(report, state, charts)


def saved_fragment(report: Report, folder: Path) -> str | None:
    """The fragment inside the run's report.html if it shows this very report (a run continued
    since rewrote it), so a notebook need not draw the charts again."""
    path = folder / REPORT_FILE
    if not path.is_file():
        return None
    page = path.read_text()
    start, end = page.find(_BODY), page.rfind(_END)
    body = page[start + len(_BODY) : end] if start != -1 and end > start else ""
    return body if _footer(report) in body else None


def write(body: str, report: Report, path: Path) -> Path:
    return write_atomic(path, document(body, f"Why did {report.metric} move? ({report.run_id})"))


# sections ----------------------------------------------------------------------------------------
class _Chart(NamedTuple):
    id: str
    png: str
    alt: str
    caption: str


def _charts(c: ChartData | None) -> list[_Chart] | None:
    if c is None:
        return None
    unit = "day" if c.grain == "day" and c.grain_step == 1 else _grain_name(c)
    level = "the ratio of each window" if c.ratio else f"the average per {unit} in each window"
    effect = "effect on the ratio (mix + rate)" if c.ratio else "change"
    below = f"; below: {c.segment}, the leading cause" if c.segment_series else ""
    charts = [
        _Chart(
            "chart-metric",
            metric_chart(c),
            f"{c.metric} per {unit} with the baseline and the window shaded",
            f"{c.metric} per {unit}; shaded: baseline (grey) and window (orange); dashed: {level}{below}.",
        ),
        _Chart(
            "chart-contributions",
            bridge_chart(c),
            f"bridge of the {effect} of {c.metric} by {c.breakdown}",
            f"From the baseline to the window: each {c.breakdown} segment's {effect}. "
            "The value axis does not start at zero.",
        ),
    ]
    # a single series has nothing to split the change by: a bridge of one bar says nothing
    charts = charts if len(c.steps) > 1 else charts[:1]
    if c.drivers is not None:
        charts.append(
            _Chart(
                "chart-drivers",
                bridge_chart(c.drivers),
                f"bridge of the change of {c.metric} by driver",
                f"From the baseline to the window: the part of the change each driver of {c.metric} carries "
                "(log-mean split: the parts add up to the change). The value axis does not start at zero.",
            )
        )
    return charts


def _grain_name(c: ChartData) -> str:
    from investigator.analysis.grain import Grain

    return Grain(c.grain, c.grain_step, c.current.start).name


def _footer(r: Report) -> str:
    return _templates().get_template("footer.html.j2").render(r=r, s=r.stats).strip()
