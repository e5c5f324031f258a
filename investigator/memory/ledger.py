"""The facts ledger: approved facts as Markdown, one list item a fact, and pending proposals.

`.investigator/facts/<topic>.md` holds what people approved, readable and diffable in a pull
request. Each fact is one line: a bracketed tag with its structured part, the text, and an HTML
comment (invisible when rendered) with its id and the run that proposed it:

    - [late_data channel=affiliate lag=2d metrics=revenue] Affiliate lands 2 days late. <!-- id:f-3a9c1e -->
    - [note metrics=revenue] Revenue excludes refunds before 2025-01.
    - The first week of January always dips about 20%.

The tag is what the offline planner acts on (`late_data` with a segment and a lag); a plain list
item is a note for every metric. A segment value, dimension or metric that is not a plain label is a
JSON string (`channel="a ] b\n"`), and so is a text that would not read back as written: whatever a
value holds, a line is one fact and reads back exactly as approved (lines written before, with
shell quotes, still read). People may edit the files by hand: lines that are not list items
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

import contextlib
import hmac
import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from investigator.memory import approval
from investigator.memory.home import FACTS, PENDING, REJECTED, ensure_home
from investigator.memory.models import ApprovedFact, FactKind, FactProposal, fact_id

MAX_LINES = 800  # above this the ledger is hard to review and to load: warn
_LINE = re.compile(
    r"^\s*[-*]\s+"
    r"(?:\[(?P<tag>(?:\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\]\"'])*)\]\s*)?"  # quotes may hold ] and spaces
    r"(?P<text>.*?)\s*(?:<!--(?P<meta>(?:(?!-->).)*)-->)?\s*$"
)
_WORD = re.compile(r"(?:\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s\"'])+")
_PIECE = re.compile(r"\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\"']+")
_KINDS: tuple[FactKind, ...] = ("late_data", "note")
_RESERVED = ("lag", "metrics")  # tag words that are not a segment: a dimension so named is quoted
_PLAIN = re.compile(r"^[\w.:/+@-]+$")
_UNSEEN = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def _json(v: str) -> str:
    """A JSON string in which every character that could hide or break the line is an escape."""
    return _UNSEEN.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(v, ensure_ascii=False))


def visible(text: str) -> str:
    """Free text (a proposal's evidence) with every control or bidi character written as an escape,
    so the terminal shows what is there."""
    return _UNSEEN.sub(lambda m: json.dumps(m.group())[1:-1], text)


def _quoted(v: str, reserved: bool = False) -> str:
    return v if _PLAIN.match(v) and not reserved else _json(v)


def _text(text: str) -> str:
    """The fact's text as written when that reads back the same, else as a JSON string (a newline,
    a comment marker, a leading quote or a control character would change the line)."""
    safe = text and text == text.strip() and not _UNSEEN.search(text)
    if safe and "<!--" not in text and "-->" not in text and not text.startswith(('"', "[")):
        return text
    return _json(text).replace("<", "\\u003c").replace(">", "\\u003e")  # no comment marker inside


def tag(f: ApprovedFact) -> str:
    """The structured part as the ledger writes it: `late_data channel=affiliate lag=2d metrics=revenue`;
    what people review is this, character for character."""
    words = [f.kind, *(f"{_quoted(k, k in _RESERVED)}={_quoted(v)}" for k, v in f.segment.items())]
    if f.lag_days is not None:
        words.append(f"lag={f.lag_days}d")
    if f.metrics and all(_PLAIN.match(m) for m in f.metrics):
        words.append("metrics=" + ",".join(f.metrics))
    else:
        words += [f"metrics={_json(m)}" for m in f.metrics]
    return " ".join(words)


def text_of(f: ApprovedFact) -> str:
    """The fact's text as the ledger writes it (a JSON string when written as is it would not read
    back the same)."""
    return _text(f.text)


def format_fact(f: ApprovedFact) -> str:
    """One Markdown list item; `parse_line` reads it back to exactly the same fact, whatever its
    segment, metrics or text hold (newlines, brackets, quotes, comment markers)."""
    meta = f"id:{f.id}" + (f" run:{f.run_id}" if f.run_id else "")
    return f"- [{tag(f)}] {text_of(f)} <!-- {meta} -->"


def _unquote(piece: str) -> str:
    if piece.startswith('"'):
        try:
            return str(json.loads(piece))
        except ValueError:  # written by hand, not JSON: its backslashes escape the next character
            return re.sub(r"\\(.)", r"\1", piece[1:-1])
    return piece[1:-1] if piece.startswith("'") else piece


def _word(word: str) -> tuple[str, bool, str, bool]:
    """key, whether the key was quoted, value, whether the value was quoted: `=` only splits
    outside quotes."""
    key: list[str] = []
    value: list[str] = []
    quoted = [False, False]
    side = 0
    for piece in _PIECE.findall(word):
        if side == 0 and piece[0] not in "\"'" and "=" in piece:
            before, _, after = piece.partition("=")
            key.append(before)
            side = 1
            if after:
                value.append(after)
            continue
        (key if side == 0 else value).append(_unquote(piece))
        quoted[side] = quoted[side] or piece[0] in "\"'"
    return "".join(key), quoted[0], "".join(value), quoted[1]


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
        words = _WORD.findall(m.group("tag"))
        if not words or words[0] not in _KINDS:
            return None  # a bracket that is not a tag: not one of our lines
        kind = "late_data" if words[0] == "late_data" else "note"
        for w in words[1:]:
            k, k_quoted, v, v_quoted = _word(w)
            if k == "lag" and not k_quoted:
                lag = int(v.rstrip("d")) if v.rstrip("d").isdigit() else None
            elif k == "metrics" and not k_quoted:
                metrics += [v] if v_quoted else [x for x in v.split(",") if x]
            elif k and v:
                segment[k] = v
    meta = dict(p.partition(":")[::2] for p in (m.group("meta") or "").split())
    text = m.group("text")
    if len(text) > 1 and text.startswith('"') and text.endswith('"'):
        with contextlib.suppress(ValueError):
            text = str(json.loads(text))
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
    paths = sorted(folder.glob("*.json")) if folder.is_dir() else []
    try:
        secret = approval.key() if paths else None
    except approval.KeyProblem as e:
        secret = None
        warnings.append(f"facts: proposals cannot be checked: {e}")
    for path in paths:
        try:
            proposal = FactProposal.model_validate_json(path.read_text())
        except (OSError, ValidationError, ValueError) as e:
            warnings.append(f"facts: skipped damaged proposal {path.name} ({type(e).__name__})")
            continue
        if (
            secret is None
            or proposal.mark is None
            or not hmac.compare_digest(proposal.mark, approval.proposal_mark(proposal, secret))
        ):
            warnings.append(
                f"facts: skipped proposal {path.name}: no run of this tool wrote it (its mark does not check)"
            )
            continue
        out.append(proposal)
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
    secret = approval.key(create=True)  # the approval key, in the private folder a kernel cannot see
    assert secret is not None
    p = p.model_copy(update={"mark": approval.proposal_mark(p, secret)})
    _write(path, p.model_dump_json(indent=1))
    return True


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _take(home: Path, fact_id_: str) -> tuple[FactProposal, Path]:
    path = home / FACTS / PENDING / f"{fact_id_}.json"
    waiting = {p.id: p for p in pending(home)[0]}  # only proposals a run of this tool wrote
    if not re.fullmatch(r"[\w-]+", fact_id_) or not path.exists() or fact_id_ not in waiting:
        ids = ", ".join(waiting) or "none"
        raise KeyError(f"no pending fact {fact_id_!r} (pending: {ids})")
    return waiting[fact_id_], path


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
