"""Planners: who decides the next step. Each returns a `Decision` from a `Context`."""

from investigator.planners.offline import OfflinePlanner

__all__ = ["OfflinePlanner"]
