"""The kernel side of the MCP line: an MCP server of persistent Jupyter kernels (local or Docker).

It imports nothing of the agent except `investigator.analysis` (preloaded into kernels); the
agent reaches it only through an MCP client session (`investigator.kernels.mcp`).
"""
