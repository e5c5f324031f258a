"""The config's names checked against the data, before a triage run writes anything: a misspelt
metric, metric column, time column or scan dimension is a bad config (exit 2), one line naming the
key, what is wrong and the nearest name, never an item "could not be scanned" in a digest."""

from __future__ import annotations

import difflib

from investigator.config import load_metrics
from investigator.errors import ConfigError, UserError
from investigator.fmt import clip
from investigator.request import parse_metric
from investigator.triage.config import Target


def check_names(columns: list[str], targets: list[Target], where: str) -> None:
    """Every name each target uses is a column of the data at `where` (a `ConfigError` if not)."""
    for t in targets:
        _check(t.time_column, columns, t.key("time_column"), "time column", where)
        try:
            num, den = parse_metric(t.expression or t.metric)
        except UserError as e:
            raise ConfigError(f"`{t.key('metric')}`: {e}") from None
        for m in (num, den):
            if m is None or m.column is None or m.column in columns:
                continue
            if m.column == t.metric and t.metric not in load_metrics():  # a bare name
                known = sorted({*columns, *load_metrics()})
                raise ConfigError(
                    f"`{t.key('metric')}`: {t.metric!r} is neither a configured metric nor a column of "
                    f"{where}{_near(m.column, known)}; columns are: {_list(columns)}"
                )
            _check(m.column, columns, t.key("metric"), f"metric {t.metric!r}'s column", where)
        for d in t.scan_segments:
            _check(d, columns, t.key("scan_segments"), "scan dimension", where)


def _check(name: str, columns: list[str], key: str, what: str, where: str) -> None:
    if name not in columns:
        raise ConfigError(
            f"`{key}`: {what} {name!r} is not in {where}{_near(name, columns)}; columns are: {_list(columns)}"
        )


def _near(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    if not close:
        lower = {c.lower(): c for c in candidates}
        close = [lower[name.lower()]] if name.lower() in lower else []
    return f": did you mean {close[0]!r}?" if close else ""


def _list(columns: list[str]) -> str:
    return clip(", ".join(columns), 300)
