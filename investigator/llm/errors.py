"""Errors of the LLM boundary, placed in the project's tree (`investigator.errors`):

UserError (exit 2)
├── LLMAuthError         the endpoint refused the key, or the account has no quota/billing
└── LLMUnreachable       no endpoint has answered at the configured URL in this run
PlannerError (exit 1)
├── LLMUnavailable       the endpoint was lost: it kept failing (connection refused, timeouts, 5xx,
│                        429) past the backoff; exit 4, the run is saved to resume
├── LLMRequestRejected   the endpoint refused the request itself (unknown model, bad parameter)
├── PromptTooLarge       a prompt broke the context budget; refused before sending
├── ModelStalled         the stream sent no token for `stall_timeout_s`; not retried (the planner falls back)
└── InvalidOutput        the answer failed validation after every re-ask (the planner falls back)
    └── AnswerCutOff     the answer reached its token cap (finish_reason "length", or "tool_calls")
"""

from __future__ import annotations

from investigator.errors import PlannerError, UserError

__all__ = [
    "AnswerCutOff",
    "InvalidOutput",
    "LLMAuthError",
    "LLMRequestRejected",
    "LLMUnavailable",
    "LLMUnreachable",
    "ModelStalled",
    "PromptTooLarge",
]


class LLMAuthError(UserError):
    """Fix the key or the account; retrying cannot help."""


class LLMUnreachable(UserError):
    """Nothing answered at the URL since the run started: a configuration error, not an outage."""


class LLMUnavailable(PlannerError):
    """Transient failures outlasted the backoff; the run is saved and can be resumed. Its own
    outcome (exit 4), not an internal error: nothing is wrong with the run, only with the endpoint."""

    exit_code = 4


class LLMRequestRejected(PlannerError):
    """The endpoint answered 4xx to the request itself: a configuration problem."""


class PromptTooLarge(PlannerError):
    """The rendered prompt would exceed the context budget; nothing was sent."""


class InvalidOutput(PlannerError):
    """The model's answer did not validate after the allowed re-asks."""


class AnswerCutOff(InvalidOutput):
    """The answer stopped at its token cap: re-asking the same question would be cut again."""


class ModelStalled(PlannerError):
    """The model stopped sending tokens; the request is abandoned, never retried behind itself."""
