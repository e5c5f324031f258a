"""investigator: explains why a metric moved, with a hypothesis-driven loop over your data."""

__version__ = "0.1.0"
__all__ = ["__version__"]
