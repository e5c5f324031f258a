"""A person's approval of a fact, in a form code in a kernel cannot forge.

The ledger is a file that code in a local kernel could write: it runs as you. So `approve` writes
into the fact's line a keyed digest (HMAC-SHA256) of the fact exactly as approved, and a run loads
only facts whose digest checks. The key is a file in the person's private folder
(`sandbox.private`), made by the first approval: a local kernel's own mount namespace hides that
folder (and pins the folders above it, so it cannot be swapped for one of the kernel's making), and
a container never sees it. A key reached through a symbolic link is not used: kernel code could
swap the link.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path

from investigator.memory.models import ApprovedFact, FactProposal
from sandbox.private import links_on_the_way, private_dir

__all__ = ["KEY_FILE", "KeyProblem", "key", "mark", "mark_of", "proposal_mark", "with_mark"]

KEY_FILE = "approval.key"
_MARK = re.compile(r"<!--(?:(?!-->).)*\bapproved:([0-9a-f]{32})\b(?:(?!-->).)*-->\s*$")


class KeyProblem(Exception):
    """The approval key cannot be trusted or made; the message says what to do."""


def _folder() -> Path:
    folder = private_dir()
    links = links_on_the_way(folder)
    if links:
        raise KeyProblem(
            f"the private folder {folder} is reached through a link ({', '.join(links)}), which code "
            "in a kernel could swap: set INVESTIGATOR_PRIVATE_DIR to a folder with no link on its path"
        )
    return folder


def key(create: bool = False) -> bytes | None:
    """The approval key; None when there is none yet (nothing was ever approved) unless `create`."""
    path = _folder() / KEY_FILE
    try:
        return bytes.fromhex(path.read_text().strip())
    except FileNotFoundError:
        if not create:
            return None
    except ValueError as e:
        raise KeyProblem(f"the approval key {path} is damaged ({e}); remove it, then approve again") from e
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    made = secrets.token_bytes(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another approval made it first
        return key()
    with os.fdopen(fd, "w") as f:
        f.write(made.hex() + "\n")
    return made


def mark(fact: ApprovedFact, secret: bytes) -> str:
    """The digest of exactly this fact (every field, its topic too) under the key."""
    body = json.dumps(fact.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    digest = hmac.new(secret, b"investigator approved fact v1\n" + body.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


def proposal_mark(proposal: FactProposal, secret: bytes) -> str:
    """The digest of a proposal as the host wrote it (every field but the mark, its run id too),
    under the same key in another domain: a proposal kernel code planted in `facts/pending/` has
    none that checks, and is not shown as the agent's own."""
    body = json.dumps(proposal.model_dump(mode="json", exclude={"mark"}), sort_keys=True, ensure_ascii=False)
    digest = hmac.new(secret, b"investigator proposed fact v1\n" + body.encode(), hashlib.sha256)
    return digest.hexdigest()[:32]


def mark_of(line: str) -> str | None:
    """The approval mark a ledger line carries, if any."""
    m = _MARK.search(line)
    return m.group(1) if m else None


def with_mark(line: str, digest: str) -> str:
    """A line as `format_fact` writes it (ending in its `<!-- ... -->` comment), the mark added."""
    line = line.rstrip()
    if line.endswith("-->"):
        return f"{line[:-3].rstrip()} approved:{digest} -->"
    return f"{line} <!-- approved:{digest} -->"
