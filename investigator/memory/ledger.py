"""The facts ledger: approved facts as Markdown, one list item a fact, and pending proposals.

`.investigator/facts/<topic>.md` holds what people approved, readable and diffable in a pull
request. Each fact is one line: a bracketed tag with its structured part, the text, and an HTML
comment (invisible when rendered) with its id and the run that proposed it:

    - [late_data channel=affiliate lag=2d metrics=revenue] Affiliate lands 2 days late. <!-- id:f-3a9c1e -->
    - [note metrics=revenue] Revenue excludes refunds before 2025-01.
    - The first week of January always dips about 20%.

The tag is what the offline planner acts on (`late_data` with a segment and a lag); a plain list
item is a note for every metric. People may edit the files by hand: lines that are not list items
are prose, and a fact without an id gets one from its content.

Proposals wait in `facts/pending/<id>.json` with their evidence and run id; `reject` moves one to
`facts/rejected/` so the same proposal is not made again. Only `approve` writes to the ledger, and
only the CLI and the notebook API call it: nothing the agent runs reaches it.

Code in a local kernel runs as you and could write a line into these files all the same, so a fact
counts only with its approval mark (`approval.py`: a keyed digest kernel code cannot make). A line
without a valid one (written by hand, changed since, or not written by `approve`) is listed as
unapproved, with a warning, until a person approves it: `approve` takes its id too.
"""

from __future__ import annotations

import hmac
import os
import re
import shlex
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from investigator.memory import approval
from investigator.memory.home import FACTS, PENDING, REJECTED, ensure_home
from investigator.memory.models import ApprovedFact, FactKind, FactProposal, fact_id

MAX_LINES = 800  # above this the ledger is hard to review and to load: warn
_LINE = re.compile(r"^\s*[-*]\s+(?:\[(?P<tag>[^\]]*)\]\s*)?(?P<text>.*?)\s*(?:<!--(?P<meta>.*?)-->)?\s*$")
_KINDS: tuple[FactKind, ...] = ("late_data", "note")
_PLAIN = re.compile(r"^[\w.:/+@-]+$")


def _quoted(v: str) -> str:
    return v if _PLAIN.match(v) else shlex.quote(v)


def format_fact(f: ApprovedFact) -> str:
    """One Markdown list item; `parse_line` reads it back to the same fact."""
    tag = [f.kind, *(f"{k}={_quoted(v)}" for k, v in f.segment.items())]
    if f.lag_days is not None:
        tag.append(f"lag={f.lag_days}d")
    if f.metrics:
        tag.append("metrics=" + ",".join(f.metrics))
    meta = f"id:{f.id}" + (f" run:{f.run_id}" if f.run_id else "")
    text = " ".join(f.text.split())  # one line, whatever the proposal held
    return f"- [{' '.join(tag)}] {text} <!-- {meta} -->"


def parse_line(line: str, topic: str) -> ApprovedFact | None:
    """A fact from one ledger line, or None for prose, headings and blank lines."""
    m = _LINE.match(line)
    if m is None or not m.group("text"):
        return None
    kind: FactKind = "note"
    segment: dict[str, str] = {}
    lag: int | None = None
    metrics: list[str] = []
    if m.group("tag") is not None:
        tag = m.group("tag")
        try:
            words = shlex.split(tag) if "'" in tag or '"' in tag else tag.split()  # shlex is slow
        except ValueError:
            return None
        if not words or words[0] not in _KINDS:
            return None  # a bracket that is not a tag: not one of our lines
        kind = "late_data" if words[0] == "late_data" else "note"
        for w in words[1:]:
            k, _, v = w.partition("=")
            if k == "lag":
                lag = int(v.rstrip("d")) if v.rstrip("d").isdigit() else None
            elif k == "metrics":
                metrics = [x for x in v.split(",") if x]
            elif k and v:
                segment[k] = v
    meta = dict(p.partition(":")[::2] for p in (m.group("meta") or "").split())
    text = m.group("text")
    return ApprovedFact(
        id=meta.get("id") or fact_id(kind, segment, lag, metrics, text),
        topic=topic,
        text=text,
        kind=kind,
        segment=segment,
        lag_days=lag,
        metrics=metrics,
        run_id=meta.get("run") or None,
    )


def approved(home: Path) -> tuple[list[ApprovedFact], list[str]]:
    """Every approved fact in the ledger (its approval mark checks), and warnings (a ledger too
    long to review, lines that carry no valid approval)."""
    facts, _, warnings = read(home)
    return facts, warnings


def read(home: Path) -> tuple[list[ApprovedFact], list[ApprovedFact], list[str]]:
    """The ledger's facts: approved, unapproved (no valid mark: not used), and warnings."""
    facts: list[ApprovedFact] = []
    unchecked: list[ApprovedFact] = []
    warnings: list[str] = []
    folder = home / FACTS
    if not folder.is_dir():
        return [], [], []
    try:
        secret = approval.key()
    except approval.KeyProblem as e:
        secret = None
        warnings.append(f"facts: no fact is used: {e}")
    lines = 0
    for path in sorted(folder.glob("*.md")):
        try:
            text = path.read_text(errors="replace").splitlines()
        except OSError as e:
            warnings.append(f"facts: cannot read {path.name} ({e})")
            continue
        lines += len(text)
        for line in text:
            fact = parse_line(line, path.stem)
            if fact is None:
                continue
            given = approval.mark_of(line)
            ok = secret is not None and given is not None
            ok = ok and hmac.compare_digest(given or "", approval.mark(fact, secret or b""))
            (facts if ok else unchecked).append(fact)
    if lines > MAX_LINES:
        warnings.append(f"facts: the ledger has {lines} lines (over {MAX_LINES}); review and prune {folder}")
    if unchecked:
        ids = ", ".join(dict.fromkeys(f.id for f in unchecked))
        warnings.append(
            f"facts: {len(unchecked)} ledger line(s) carry no valid approval and are not used (written by "
            f"hand, changed since, or not by `investigate facts approve`): {ids}; approve one with "
            "`investigate facts approve ID`"
        )
    return facts, unchecked, warnings


def relevant(facts: list[ApprovedFact], metric: str, dimensions: list[str]) -> list[ApprovedFact]:
    """Facts about this metric and only these dimensions: structured ones, then this metric's
    own, then those for every metric."""
    keep = [f for f in facts if f.applies_to(metric, dimensions)]
    return sorted(keep, key=lambda f: (f.kind == "note", not f.metrics, f.topic != metric))


# proposals ----------------------------------------------------------------------------------------
def pending(home: Path) -> tuple[list[FactProposal], list[str]]:
    """Proposals waiting for a person, oldest first; a damaged file is skipped with a warning."""
    out: list[FactProposal] = []
    warnings: list[str] = []
    folder = home / FACTS / PENDING
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            out.append(FactProposal.model_validate_json(path.read_text()))
        except (OSError, ValidationError, ValueError) as e:
            warnings.append(f"facts: skipped damaged proposal {path.name} ({type(e).__name__})")
    return sorted(out, key=lambda p: (p.created or datetime.min.replace(tzinfo=UTC), p.id)), warnings


def propose(home: Path, proposal: FactProposal) -> bool:
    """Keep a proposal for review, unless it is approved, pending or was rejected already."""
    ensure_home(home)
    p0 = proposal
    p = proposal.model_copy(
        update={
            "id": fact_id(p0.kind, p0.segment, p0.lag_days, p0.metrics, p0.text),
            "created": proposal.created or datetime.now(UTC),
        }
    )
    known = {f.id for f in approved(home)[0]}
    facts = home / FACTS
    if p.id in known or (facts / REJECTED / f"{p.id}.json").exists():
        return False
    path = facts / PENDING / f"{p.id}.json"
    if path.exists():
        return False
    _write(path, p.model_dump_json(indent=1))
    return True


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _take(home: Path, fact_id_: str) -> tuple[FactProposal, Path]:
    path = home / FACTS / PENDING / f"{fact_id_}.json"
    if not re.fullmatch(r"[\w-]+", fact_id_) or not path.exists():
        ids = ", ".join(p.id for p in pending(home)[0]) or "none"
        raise KeyError(f"no pending fact {fact_id_!r} (pending: {ids})")
    return FactProposal.model_validate_json(path.read_text()), path


def approve(home: Path, fact_id_: str, topic: str | None = None) -> ApprovedFact:
    """A person approved a proposal: it becomes a line in `facts/<topic>.md`, with its approval
    mark. The id of an unapproved ledger line (written by hand) approves that line as it is."""
    ensure_home(home)
    secret = approval.key(create=True)
    assert secret is not None
    try:
        proposal, path = _take(home, fact_id_)
    except KeyError:
        return _approve_line(home, fact_id_, secret)
    fact = ApprovedFact.model_validate(
        proposal.model_dump(include=set(ApprovedFact.model_fields)) | ({"topic": topic} if topic else {})
    )
    target = home / FACTS / f"{_safe(fact.topic)}.md"
    line, fact = signed(fact, target.stem, secret)
    head = "" if target.exists() else f"# Facts: {fact.topic}\n\nApproved by people; one fact a line.\n\n"
    with open(target, "a") as f:  # one append: two people approving at once both land
        f.write(head + line + "\n")
    path.unlink(missing_ok=True)
    return fact


def signed(fact: ApprovedFact, topic: str, secret: bytes) -> tuple[str, ApprovedFact]:
    """The fact's ledger line with its approval mark, and the fact as the ledger reads it back
    (what the mark is of)."""
    line = format_fact(fact)
    back = parse_line(line, topic)
    assert back is not None, line
    return approval.with_mark(line, approval.mark(back, secret)), back


def _approve_line(home: Path, fact_id_: str, secret: bytes) -> ApprovedFact:
    """Approve a ledger line that carries no valid mark, rewritten in the ledger's own form."""
    _, unchecked, _ = read(home)
    fact = next((f for f in unchecked if f.id == fact_id_), None)
    if fact is None:
        waiting = ", ".join(p.id for p in pending(home)[0]) or "none"
        lines = ", ".join(f.id for f in unchecked) or "none"
        raise KeyError(f"no pending fact {fact_id_!r} (pending: {waiting}; unapproved ledger lines: {lines})")
    target = home / FACTS / f"{fact.topic}.md"
    line, back = signed(fact, fact.topic, secret)
    text = target.read_text(errors="replace").splitlines()
    at = next(i for i, x in enumerate(text) if (f := parse_line(x, fact.topic)) is not None and f == fact)
    _write(target, "\n".join([*text[:at], line, *text[at + 1 :]]) + "\n")
    return back


def reject(home: Path, fact_id_: str) -> FactProposal:
    """A person rejected a proposal: it is kept aside so it is not proposed again."""
    ensure_home(home)
    proposal, path = _take(home, fact_id_)
    os.replace(path, home / FACTS / REJECTED / path.name)
    return proposal


def _safe(topic: str) -> str:
    return re.sub(r"[^\w.-]+", "_", topic).strip("._") or "general"
