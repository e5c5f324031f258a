"""How numbers, shares and segments read in findings, conclusions and reports.

Values from the data travel into findings, and findings into the LLM's prompt: text inside data is
data, never instructions. A value that is not a plain label is quoted, cut and stripped of control
characters wherever it is written (`value`), so it reads as a quoted value and nothing else.
"""

from __future__ import annotations

import json
import math
import re
import reprlib

VALUE_MAX = 60  # characters of a data value shown in findings, conclusions and prompts
QUOTE_MAX = 200  # characters of an input quoted in an error message
_PLAIN = re.compile(r"^[\w.:/+-]{1,60}$")  # labels like DE, paid_search, 2026-03, iOS/17
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def num(x: float | None) -> str:
    """A metric value: 864.63k, 1.20M, 0.0312. Never raises: NaN (or anything that is not a number,
    such as "inf" carried as text through JSON) reads n/a, an infinity +inf or -inf."""
    try:
        x = None if x is None else float(x)
    except (TypeError, ValueError):
        x = None
    if x is None or not math.isfinite(x):
        return "n/a" if x is None or math.isnan(x) else ("+inf" if x > 0 else "-inf")
    a = abs(x)
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.2f}{suffix}"
    return f"{x:.4g}" if a < 1 else f"{x:,.1f}"


def pair(a: float | None, b: float | None) -> tuple[str, str]:
    """Two values compared with each other, in one precision that shows their difference:
    1,050.3 and 1,064.7 (not 1.05k and 1.06k), a price 1.886 and 1.817 (not 1.9 and 1.8)."""
    try:
        x, y = float(a), float(b)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return num(a), num(b)
    if not (math.isfinite(x) and math.isfinite(y)):
        return num(x), num(y)
    big, diff = max(abs(x), abs(y)), abs(x - y)
    div, suffix = next(((d, s) for d, s in ((1e9, "B"), (1e6, "M")) if big >= d), (1.0, ""))
    if not diff or (big / div >= 1e4 and not suffix):
        return num(x), num(y)
    # two significant digits of the difference and three of the values; whole numbers stay whole
    small = min((abs(v) for v in (x, y) if v), default=big)
    decimals = max(0, math.ceil(-math.log10(diff / div)) + 1, math.ceil(-math.log10(small / div)) + 2)
    if not suffix and x.is_integer() and y.is_integer():
        decimals = 0
    elif not suffix and big < 1e4:
        decimals = max(decimals, 1)
    decimals = min(decimals, 6)
    return tuple(f"{v / div:,.{decimals}f}{suffix}" for v in (x, y))  # type: ignore[return-value]


def share(x: float) -> str:
    """A share of the change, rounded once (to the 0.1% a cause's contribution keeps) so that the
    headline and the evidence show the same number: 0.9754 is 98% in both."""
    return f"{round(round(x, 3) * 100):.0f}%"


def pct(x: float | None) -> str:
    """A relative change with its sign: +12.3%; a change that rounds to nothing is 0.0%, not -0.0%."""
    if x is None:
        return "n/a"
    return "0.0%" if abs(x) < 0.0005 else f"{x:+.1%}"


def value(text: object) -> str:
    """A value from the data as it may be shown: as is when it is a plain label, else quoted (JSON
    string), cut to `VALUE_MAX` characters and without control or bidi characters."""
    s = _CONTROL.sub("", str(text))
    if _PLAIN.match(s):
        return s
    if len(s) > VALUE_MAX:
        s = s[: VALUE_MAX - 1] + "…"
    return json.dumps(s, ensure_ascii=False)


def seg(segment: dict[str, str]) -> str:
    """A segment as people write it: country=DE & channel=social; {} is the whole metric."""
    return " & ".join(f"{value(k)}={value(v)}" for k, v in segment.items()) or "(whole metric)"


def md(text: object) -> str:
    """Text from the data or a model, safe inside Markdown: HTML is shown, never rendered (`<img
    onerror=...>` in a dimension value stays text), and table pipes or emphasis do not bend the layout."""
    out = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    for ch in "\\`*_[]|":
        out = out.replace(ch, "\\" + ch)
    return out


def chat(text: object) -> str:
    """Text from the data or a model inside a chat message (Slack, Teams, Discord, ... through
    Apprise's Markdown): shown, never acted on. No mention (`<!channel>`, `@here`), no disguised
    link (`<url|label>`, `[label](url)`), no emphasis: Markdown's backslash escapes, which Apprise
    turns into each service's own (`\\<` is `&lt;` for Slack), a zero-width space after `@`, one
    line."""
    out = " ".join(str(text).splitlines())
    for ch in "\\`*_~[]|<>":
        out = out.replace(ch, "\\" + ch)
    return out.replace("@", "@\u200b")


def clip(text: object, limit: int = QUOTE_MAX) -> str:
    """Input quoted in a message (a config value, a parser's error): at most `limit` characters,
    so a huge input never makes a huge message."""
    s = str(text)
    return s if len(s) <= limit else s[: limit - 1] + "…"


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxstring, _SHORT.maxother = 3, 60, 60
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxdict = _SHORT.maxset = 6


def quoted(obj: object, limit: int = QUOTE_MAX) -> str:
    """`repr(obj)` for a message, bounded before it is built: a value with a billion items costs a
    few of them (`clip` of a full repr would build it whole first)."""
    return clip(_SHORT.repr(obj), limit)
