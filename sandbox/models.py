"""What an execution returns. The user's code failing is data here, never our exception."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class ExecError(BaseModel):
    name: str
    value: str
    traceback: list[str] = Field(default_factory=list)


class ExecResult(BaseModel):
    """Everything one `execute` produced in the kernel."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    result: str | None = None  # repr of the last expression (text/plain)
    error: ExecError | None = None
    data: list[dict[str, Any]] = Field(default_factory=list)  # structured results (emit)
    displays: list[str] = Field(default_factory=list)  # text/plain of other display outputs
    files: list[str] = Field(default_factory=list)  # workspace files written by this execution
    elapsed_s: float = 0.0
    timed_out: bool = False
    restarted: bool = False  # the kernel died (or hung) and was restarted: its state is gone
    restored: list[str] = Field(default_factory=list)  # DataFrames reloaded after a restart

    def text(self) -> str:
        """The output as a person would read it in a notebook."""
        parts = [self.stdout]
        parts += self.displays
        if self.result:
            parts.append(self.result)
        if self.stderr:
            parts.append(f"[stderr]\n{self.stderr}")
        if self.error:
            parts.append(f"{self.error.name}: {self.error.value}")
        if self.timed_out:
            parts.append("[execution timed out and was interrupted]")
        if self.restarted and self.restored:
            names = ", ".join(self.restored)
            parts.append(
                "[the kernel died and was restarted: DataFrames reloaded from the workspace: "
                f"{names}; other variables were lost]"
            )
        elif self.restarted:
            parts.append("[the kernel died and was restarted: variables were lost]")
        return "\n".join(p for p in parts if p).strip()


class ToolResult(BaseModel):
    """What every sandbox MCP tool returns, as structured content (and as JSON text)."""

    success: bool
    summary: str
    data: dict[str, Any] = Field(default_factory=dict)
