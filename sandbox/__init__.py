"""Kernel execution for generated code: a persistent Jupyter kernel behind one `Kernel` protocol."""

from sandbox.models import ExecError, ExecResult, ToolResult

__all__ = ["ExecError", "ExecResult", "ToolResult"]
