"""The report as HTML: a fragment for Jupyter (`_repr_html_`) and the same as one self-contained file.

Conclusion and confidence first, then the metric over time and the bridge of segment changes
(embedded PNGs), root causes, the hypothesis table, and the findings trail folded in `<details>`.
No scripts and nothing fetched: the file's Content-Security-Policy forbids any request.
"""

from __future__ import annotations

import html
from pathlib import Path

from investigator.fmt import num, pct, seg
from investigator.report.charts import ChartData, bridge_chart, chart_data, metric_chart
from investigator.report.model import Report, segment_cells, signed
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


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def fragment(report: Report, state: RunState | None = None, charts: ChartData | None = None) -> str:
    """The report as an HTML fragment with its own scoped styles (what a notebook shows)."""
    r, m = report, report.movement
    sig = "" if m.significant is None else (", significant" if m.significant else ", not significant")
    parts = [
        f'<div class="inv-report" id="inv-{_e(r.run_id)}"><style>{CSS}</style>',
        f'<span class="inv-badge conf-{_e(r.confidence)}">confidence {_e(r.confidence)}</span>'
        f'<span class="inv-badge">{_e(r.status)}</span>',
        f"<h2>Why did {_e(r.metric)} move?</h2>",
        f'<p class="inv-conclusion">{_e(r.conclusion or "No conclusion.")}</p>',
        f'<p class="inv-meta">{num(m.baseline)} &rarr; {num(m.current)} ({pct(m.change_pct)}{sig}) · '
        f"window {r.window.start} to {r.window.end} vs {_e(r.baseline.kind)} baseline "
        f"{r.baseline.start} to {r.baseline.end}</p>",
        _charts(charts),
        _causes(r),
        _segments(r),
        _hypotheses(r),
        _trail(r, state),
        _footer(r),
        "</div>",
    ]
    return "\n".join(p for p in parts if p)


def document(body: str, title: str) -> str:
    """A complete, self-contained page around a fragment."""
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title></head>\n"
        f"{_BODY}{body}{_END}"
    )


def build(report: Report, folder: Path) -> str:
    """The report fragment of a run folder, with charts drawn from the run's data."""
    state = load(folder) if (folder / "state.json").exists() else None
    charts = None
    if state is not None:
        causes = state.conclusion.root_causes if state.conclusion else []
        charts = chart_data(state.data_path, state.spec, causes, state.evidence)
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
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document(body, f"Why did {report.metric} move? ({report.run_id})"))
    return path


# sections ----------------------------------------------------------------------------------------
def _img(chart_id: str, png: str, alt: str, caption: str) -> str:
    return (
        f'<figure><img id="{chart_id}" class="inv-chart" alt="{_e(alt)}" '
        f'src="data:image/png;base64,{png}"><figcaption>{_e(caption)}</figcaption></figure>'
    )


def _charts(c: ChartData | None) -> str:
    if c is None:
        return '<p class="inv-meta">Charts unavailable: the run state or its data could not be read.</p>'
    level = "the ratio of each window" if c.ratio else "the average per day in each window"
    unit = "effect on the ratio (mix + rate)" if c.ratio else "change"
    return "\n".join(
        [
            _img(
                "chart-metric",
                metric_chart(c),
                f"{c.metric} per day with the baseline and the window shaded",
                f"{c.metric} per day; shaded: baseline (grey) and window (orange); dashed: {level}.",
            ),
            _img(
                "chart-contributions",
                bridge_chart(c),
                f"bridge of the {unit} of {c.metric} by {c.breakdown}",
                f"From the baseline to the window: each {c.breakdown} segment's {unit}. "
                "The value axis does not start at zero.",
            ),
        ]
    )


def _table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def _causes(r: Report) -> str:
    if not r.root_causes:
        return ""
    rows = []
    for i, c in enumerate(r.root_causes, 1):
        share = f"{c.contribution:.0%}" if c.contribution is not None else ""
        check = {True: "yes", False: "no", None: ""}[c.verified]
        kind = c.kind + (f" ({c.detail})" if c.detail else "")
        rows.append(
            [str(i), _e(kind), _e(seg(c.segment)), share, _e(signed(c.change)), check, _e(c.evidence)]
        )
    notes = "".join(f'<p class="inv-meta">{_e(n)}</p>' for n in r.notes)
    head = ["#", "kind", "segment", "share", "change", "verified", "evidence"]
    return "<h3>Root causes</h3>" + _table(head, rows) + notes


def _segments(r: Report) -> str:
    if not r.segments:
        return ""
    rows = [[_e(cell) for cell in segment_cells(s)] for s in r.segments]
    head = ["segment", "window", "baseline", "change", "share of net change"]
    return "<h3>Segments that moved most</h3>" + _table(head, rows)


def _hypotheses(r: Report) -> str:
    rows = [
        [
            _e(h.id),
            f'<span class="inv-badge st-{_e(h.status)}">{_e(h.status)}</span>',
            _e(h.statement),
            _e(h.evidence),
        ]
        for h in r.hypotheses
    ]
    return "<h3>Hypotheses</h3>" + _table(["id", "status", "statement", "evidence"], rows)


def _trail(r: Report, state: RunState | None) -> str:
    decisions = state.decisions if state else []
    items = []
    for f in r.findings:
        d = decisions[f.iteration - 1] if 0 < f.iteration <= len(decisions) else None
        head = f"<b>{_e(f.decision)}</b>" + (f" {_e(d.hypothesis_id)}" if d and d.hypothesis_id else "")
        why = f'<div class="inv-meta">{_e(d.rationale)}</div>' if d and d.rationale else ""
        code = f"<details><summary>code</summary><pre>{_e(d.code)}</pre></details>" if d and d.code else ""
        items.append(f'<li value="{f.iteration}">{head}: {_e(f.summary)}{why}{code}</li>')
    return (
        f'<details class="inv-trail"><summary>Findings trail ({len(r.findings)} steps)</summary>'
        f"<ol>{''.join(items)}</ol></details>"
    )


def _footer(r: Report) -> str:
    s = r.stats
    tokens = f", {s.tokens.get('total', 0):,} tokens" if s.tokens.get("total") else ""
    stop = f" Stopped: {_e(r.stop_reason)}." if r.stop_reason and r.status != "concluded" else ""
    blockers = "".join(f"<li>{_e(b)}</li>" for b in r.blockers)
    return (
        (f"<h3>Needs a person</h3><ul>{blockers}</ul>" if blockers else "")
        + f'<p class="inv-foot">{s.iterations} iterations in {s.elapsed_s:.1f}s with the {_e(s.planner)} '
        f"planner{tokens}; run {_e(r.run_id)}.{stop}</p>"
    )
