"""The error tree. Every failure a user can fix is a `UserError` (CLI exit code 2); everything else
is an `InvestigatorError` (exit code 1). Messages say what to do next.

    InvestigatorError
    ├── UserError            bad flag, config or input data (exit 2)
    │   ├── ConfigError      malformed config file or unknown metric
    │   └── DataError        unreadable file, missing column, empty window, non-numeric metric
    ├── KernelError          the execution kernel could not start or keeps dying
    ├── StorageError         the run's files could not be written (disk full, file too large)
    └── PlannerError         the planner failed in a way the loop cannot recover from
                             (`llm.errors.LLMUnavailable`, the model endpoint lost: exit 4)

`exit_code` is the CLI's exit code for the error.
"""

from __future__ import annotations


class InvestigatorError(Exception):
    """Base of every error the tool raises on purpose.

    An error that leaves the run saved says how to go on (`then`: "resume it later with") and ends
    with the command that resumes it. The code that raises it seldom knows which run it is in, so
    the runner sets `run_id` as the error passes, and the command names the run from then on."""

    exit_code = 1

    def __init__(self, *args: object, then: str | None = None, run_id: str | None = None) -> None:
        super().__init__(*args)
        self.then, self.run_id = then, run_id

    def __str__(self) -> str:
        text = super().__str__()
        if self.then is None:
            return text
        return f"{text}; the run is saved: {self.then} `investigate resume {self.run_id or 'RUN_ID'}`"


class UserError(InvestigatorError):
    """Something the user can fix: a flag, a config file, the data."""

    exit_code = 2


class ConfigError(UserError):
    """A config file or metric definition that cannot be used."""


class DataError(UserError):
    """Input data that cannot answer the question as asked."""


class KernelError(InvestigatorError):
    """The execution kernel could not be started or reached."""


class StorageError(InvestigatorError):
    """The run's folder could not be written: a full disk, a file over the size limit, a
    read-only mount. The last checkpoint stands (checkpoints are written whole or not at all)."""


class PlannerError(InvestigatorError):
    """The planner failed in a way the loop cannot recover from."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (or the warm helper's client going away) during a run: which run, and whether it
    saved anything to resume from."""

    def __init__(self, run_id: str, resumable: bool, reports_only: bool = False) -> None:
        super().__init__(run_id)
        self.run_id, self.resumable = run_id, resumable
        self.reports_only = reports_only  # the run had concluded: only its reports were left to write
