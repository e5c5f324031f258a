"""`McpKernel` tests use the sandbox's fixtures: the backend parameter and a started kernel."""

from ..sandbox.conftest import anyio_backend, backend, kernel

__all__ = ["anyio_backend", "backend", "kernel"]
