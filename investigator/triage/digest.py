"""The digest: what one triage run scanned, investigated, skipped and whom it told, as JSON (the
contract), Markdown and an HTML table people read in the morning."""

from __future__ import annotations

import os
from pathlib import Path

from jinja2 import Environment
from pydantic import BaseModel, Field

from investigator.fmt import md, num, pct, seg
from investigator.triage.alerts import AlertNote
from investigator.triage.freshness import Stale
from investigator.triage.notify import Notification
from investigator.triage.runs import Investigated, Skipped, top_cause
from investigator.triage.scan import ScanItem
from investigator.triage.template import DIGEST_HTML


class Digest(BaseModel):
    """The JSON contract: exactly these six lists (`alerts`: the morning's flagged series grouped
    into alerts, each with what happened to it; `stale`: sources whose data did not arrive)."""

    scanned: list[ScanItem] = Field(default_factory=list)
    investigated: list[Investigated] = Field(default_factory=list)
    skipped: list[Skipped] = Field(default_factory=list)
    notifications: list[Notification] = Field(default_factory=list)
    stale: list[Stale] = Field(default_factory=list)
    alerts: list[AlertNote] = Field(default_factory=list)


class Row(BaseModel):
    """One line of the morning table."""

    metric: str
    segment: str
    change: str
    score: str
    verdict: str
    cause: str
    link: str | None = None


def rows(d: Digest, folder: Path | None = None) -> list[Row]:
    """Flagged items first (investigated, then skipped), each with its verdict and top cause; the
    link to a run's report is relative to `folder` (the digest's), so the folder can move."""
    out = []
    for i in d.investigated:
        link = None
        if i.report:
            link = os.path.relpath(i.report, folder) if folder else i.report
        verdict = i.status if i.status == "failed" else f"{i.status} ({i.confidence or 'low'})"
        cause = top_cause(i.root_causes) or i.conclusion
        if i.note:
            cause = f"{cause} [{i.note}]"
        out.append(
            Row(
                metric=i.metric,
                segment=seg(i.segment),
                change=pct(i.change_pct),
                score=_z(i.score),
                verdict=verdict,
                cause=cause,
                link=link,
            )
        )
    for s in d.skipped:
        link = None  # an earlier run's report, beside the digests in the runs folder
        if s.run_id and folder is not None:
            link = os.path.relpath(folder.parent / s.run_id / "report.html", folder)
        out.append(
            Row(
                metric=s.metric,
                segment=seg(s.segment),
                change=pct(s.change_pct),
                score=_z(s.score),
                verdict="not investigated",
                cause=s.reason,
                link=link,
            )
        )
    return out


def headline(d: Digest) -> str:
    flagged = sum(1 for s in d.scanned if s.flagged)
    failed = sum(1 for i in d.investigated if i.status == "failed")
    errors = sum(1 for s in d.scanned if s.error)
    parts = [f"{len(d.scanned)} series scanned", f"{flagged} flagged", f"{len(d.investigated)} investigated"]
    if failed:
        parts.append(f"{failed} failed")
    if errors:
        parts.append(f"{errors} could not be scanned")
    return ", ".join(parts)


def to_markdown(d: Digest, title: str, folder: Path | None = None) -> str:
    lines = [f"# {title}", "", headline(d), ""]
    table = rows(d, folder)
    if table:
        lines += ["| metric | segment | change | score | verdict | top cause | report |", "|---" * 7 + "|"]
        for r in table:
            cells = [r.metric, r.segment, r.change, r.score, r.verdict, r.cause, r.link or ""]
            lines.append("| " + " | ".join(md(c).replace("\n", " ") for c in cells) + " |")
    else:
        lines.append("Nothing moved abnormally.")
    errors = [s for s in d.scanned if s.error]
    if errors:
        lines += ["", "## Could not scan", *[f"- {md(s.metric)}: {md(s.error)}" for s in errors]]
    if d.notifications:
        lines += ["", "## Notifications"]
        for n in d.notifications:
            lines.append(f"- {md(n.target)}: {'sent' if n.ok else f'failed ({md(n.error)})'}")
    return "\n".join(lines) + "\n"


def to_html(d: Digest, title: str, folder: Path | None = None) -> str:
    env = Environment(autoescape=True)
    return env.from_string(DIGEST_HTML).render(
        title=title, headline=headline(d), rows=rows(d, folder), digest=d, num=num, pct=pct, seg=seg, z=_z
    )


def write_digest(d: Digest, folder: Path, title: str, json_path: Path | None = None) -> Path:
    """`digest.json|.md|.html` in `folder`, and the JSON at `json_path` too; returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    text = d.model_dump_json(indent=2)
    (folder / "digest.json").write_text(text)
    (folder / "digest.md").write_text(to_markdown(d, title, folder))
    (folder / "digest.html").write_text(to_html(d, title, folder))
    if json_path is not None:
        json_path.parent.mkdir(parents=True, exist_ok=True)
        json_path.write_text(text)
    return folder


def _z(score: float | None) -> str:
    return "n/a" if score is None else f"{score:+.1f}"
