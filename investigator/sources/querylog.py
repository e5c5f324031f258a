"""Every query a warehouse source sends, with its SQL, its seconds and the rows it returned.

`logged(con)` wraps an Ibis connection so each fetch (`execute`, `to_pyarrow`, ...) of an expression
is timed and written to the `investigator.sources.queries` logger at DEBUG: the SQL as the engine
received it, never a credential (the URL is not in it). `benchmarks/scale.py` reads the log to time
the same SQL directly against the engine, beside the run; `INVESTIGATOR_LOG_QUERIES=1` prints it.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

LOG = logging.getLogger("investigator.sources.queries")
_FETCHES = ("execute", "to_pyarrow", "to_pandas", "to_pyarrow_batches")


@dataclass(frozen=True)
class Query:
    """One query sent: what for (`what`), its SQL, the seconds until its answer was on the host,
    and the rows that came back."""

    what: str
    sql: str
    seconds: float
    rows: int


def logged(con: Any) -> Any:
    """`con`, with every expression it runs logged as a `Query` (its `extra["query"]`). Nested
    calls (`execute` running `to_pyarrow`) are logged once, by the outermost."""
    if getattr(con, "_investigator_logged", False):
        return con
    depth = threading.local()
    for name in _FETCHES:
        method = getattr(con, name, None)
        if method is not None:
            setattr(con, name, _timed(con, name, method, depth))
    con._investigator_logged = True
    _print_if_asked()
    return con


def _timed(con: Any, name: str, method: Any, depth: threading.local) -> Any:
    def run(expr: Any, *args: Any, **kwargs: Any) -> Any:
        level = getattr(depth, "n", 0)
        depth.n = level + 1
        started = time.perf_counter()
        try:
            result = method(expr, *args, **kwargs)
        finally:
            depth.n = level
        if level == 0 and LOG.isEnabledFor(logging.DEBUG):
            seconds = time.perf_counter() - started
            rows = getattr(result, "num_rows", None)
            rows = len(result) if rows is None and hasattr(result, "__len__") else rows
            query = Query(_caller(), _sql(con, expr, kwargs.get("limit")), seconds, int(rows or 0))
            LOG.debug("%.3fs %s rows for %s: %s", seconds, query.rows, query.what, query.sql,
                      extra={"query": query})  # fmt: skip
        return result

    return run


def _sql(con: Any, expr: Any, limit: Any) -> str:
    try:
        return str(con.compile(expr, limit=limit))
    except Exception:  # pragma: no cover - a backend that cannot show its SQL
        return repr(expr)


def _caller() -> str:
    """The investigator function that asked (outside this module and Ibis)."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("investigator.") and module not in (__name__, "investigator.sources.fetch"):
            return f"{module.rsplit('.', 1)[-1]}.{frame.f_code.co_name}"
        frame = frame.f_back  # type: ignore[assignment]
    return "?"


def _print_if_asked() -> None:
    """`INVESTIGATOR_LOG_QUERIES=1`: every query on stderr as it is answered."""
    if os.environ.get("INVESTIGATOR_LOG_QUERIES") and not any(
        getattr(h, "_investigator", False) for h in LOG.handlers
    ):
        handler = logging.StreamHandler()
        handler._investigator = True  # type: ignore[attr-defined]
        LOG.addHandler(handler)
        LOG.setLevel(logging.DEBUG)


def record(sql: str, seconds: float, rows: int) -> None:
    """Log a query sent outside Ibis's fetches (`fetch`), as `logged` logs the others."""
    if LOG.isEnabledFor(logging.DEBUG):
        query = Query(_caller(), sql, seconds, rows)
        LOG.debug("%.3fs %s rows for %s: %s", seconds, rows, query.what, sql, extra={"query": query})


def note(what: str, seconds: float) -> None:
    """Log a step that is no query (connecting) with its seconds."""
    _print_if_asked()
    if LOG.isEnabledFor(logging.DEBUG):
        LOG.debug("%.3fs %s", seconds, what, extra={"query": Query(what, "", seconds, 0)})
