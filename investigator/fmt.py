"""How numbers, shares and segments read in findings, conclusions and reports."""

from __future__ import annotations


def num(x: float | None) -> str:
    """A metric value: 864.63k, 1.20M, 0.0312."""
    if x is None:
        return "n/a"
    a = abs(x)
    for div, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if a >= div:
            return f"{x / div:.2f}{suffix}"
    return f"{x:.4g}" if a < 1 else f"{x:,.1f}"


def pct(x: float | None) -> str:
    """A relative change with its sign: +12.3%."""
    return "n/a" if x is None else f"{x:+.1%}"


def seg(segment: dict[str, str]) -> str:
    """A segment as people write it: country=DE & channel=social; {} is the whole metric."""
    return " & ".join(f"{k}={v}" for k, v in segment.items()) or "(whole metric)"
