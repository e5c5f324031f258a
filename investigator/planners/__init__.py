"""Planners: who decides the next step. Each returns a `Decision` from a `Context`."""

from .offline import OfflinePlanner

__all__ = ["OfflinePlanner"]
