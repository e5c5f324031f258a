"""The agent's side of the MCP line: the kernels the loop talks to."""
