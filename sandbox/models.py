"""What crosses the MCP line: one result model per tool, so the server publishes an output schema
for each and the client validates instead of indexing strings. The user's code failing is data
here (`ExecResult.error`), never our exception."""

from __future__ import annotations

from pydantic import BaseModel, Field, JsonValue


class ExecError(BaseModel):
    name: str
    value: str
    traceback: list[str] = Field(default_factory=list)


class Emitted(BaseModel):
    """One structured result published by kernel code with `emit`. `result` is plain JSON: the
    host parses it into a typed analysis result in one place (`investigator.run.evidence`)."""

    label: str | None = None
    result: JsonValue = None
    saved_as: str | None = Field(None, description="workspace file holding a result too big to send")
    note: str | None = None


class ExecResult(BaseModel):
    """Everything one `execute` produced in the kernel."""

    ok: bool
    stdout: str = ""
    stderr: str = ""
    result: str | None = None  # repr of the last expression (text/plain)
    error: ExecError | None = None
    data: list[Emitted] = Field(default_factory=list)  # structured results (emit)
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


class SessionInfo(BaseModel):
    """`create_session`: the new session and where things are, as the host and the kernel see them."""

    session_id: str
    backend: str
    workspace: str
    workspace_in_kernel: str
    data_paths: dict[str, str] = Field(default_factory=dict, description="host path -> path in the kernel")
    warnings: list[str] = Field(default_factory=list)
    restored: list[str] = Field(default_factory=list, description="DataFrames reloaded from the workspace")
    swept_orphans: list[str] = Field(default_factory=list)


class Installed(BaseModel):
    package: str
    stdout: str = ""


class Uploaded(BaseModel):
    name: str
    path_in_kernel: str
    bytes: int


class FileList(BaseModel):
    files: dict[str, int] = Field(default_factory=dict, description="workspace file -> size in bytes")


class FileContent(BaseModel):
    """A workspace file: `text` when it is UTF-8, else `content_base64`."""

    name: str
    bytes: int
    text: str | None = None
    content_base64: str | None = None


class Restarted(BaseModel):
    restored: list[str] = Field(default_factory=list)


class Closed(BaseModel):
    session_id: str
