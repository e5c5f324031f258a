"""What the model must answer, as pydantic models that `instructor` validates.

They mirror `Decision`, `Compressed` and the reflection, minus what only the loop may set (whether a
cause is verified, re-ranking outside reflection). Each call builds its model with the run's
hypothesis ids baked into a validator, so an unknown id, code that does not compile or cannot be an
analysis (a bare literal, a lone comment: it would use up a step) or a missing field comes back to
the model as a validation error it can fix.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal, TypeVar, cast

from pydantic import BaseModel, Field, FiniteFloat, ValidationError, field_validator, model_validator

from investigator.run.compress import Compressed, summarise
from investigator.run.decision import CauseKind, Confidence, Decision, DecisionType, RootCause
from investigator.run.hypotheses import HypothesisKind, Status, Update

M = TypeVar("M", bound=BaseModel)


class ClaimedCause(BaseModel):
    """One root cause the model claims; the loop recomputes it from the data before accepting."""

    kind: CauseKind
    segment: dict[str, str] = Field(
        default_factory=dict, description="dimension -> value, exactly as in the data; {} = whole metric"
    )
    contribution: FiniteFloat | None = Field(
        None, description="share of the change explained, a finite number, e.g. 0.78"
    )
    detail: str | None = Field(
        None, description="data_quality only: missing_data, duplicates or incomplete_recent_data"
    )
    driver: str | None = Field(
        None, description="driver_change only: the driver that moved, as the tree names it"
    )
    evidence: str = Field("", description="the numbers that support it")


class NextStep(BaseModel):
    """The next step of the investigation."""

    type: DecisionType = Field(description="ANALYZE, DRILL_DOWN, PIVOT or CONCLUDE")
    rationale: str = Field(description="why this step, in one or two sentences")
    hypothesis_id: str | None = Field(None, description="the hypothesis this step tests (e.g. H2)")
    code: str | None = Field(None, description="Python for the kernel; required for ANALYZE and DRILL_DOWN")
    conclusion: str | None = Field(None, description="CONCLUDE only: the answer in two or three sentences")
    confidence: Confidence | None = Field(None, description="CONCLUDE only")
    root_causes: list[ClaimedCause] = Field(default_factory=list, description="CONCLUDE only")

    _ids: frozenset[str] = frozenset()
    _must_conclude: bool = False

    @field_validator("code")
    @classmethod
    def _compiles(cls, code: str | None) -> str | None:
        if code and code.strip():
            try:
                compile(code, "<step>", "exec")
            except SyntaxError as e:
                raise ValueError(f"code does not compile: {e.msg} (line {e.lineno})") from None
            if inert(code):
                raise ValueError(
                    "the code does nothing: it calls no function and reads no name from the workspace "
                    f"({' '.join(code.split())[:60]!r}); write code that analyses the data"
                )
        return code

    @model_validator(mode="after")
    def _consistent(self) -> NextStep:
        if self._must_conclude and self.type != DecisionType.CONCLUDE:
            raise ValueError("the context says you must CONCLUDE now; answer with type CONCLUDE")
        if self.hypothesis_id is not None and self._ids and self.hypothesis_id not in self._ids:
            raise ValueError(
                f"hypothesis_id {self.hypothesis_id!r} is not one of {', '.join(sorted(self._ids))}"
            )
        if self.type == DecisionType.PIVOT and not self.hypothesis_id:
            raise ValueError("PIVOT needs the hypothesis_id to move to")
        try:
            self.to_decision()
        except ValidationError as e:
            raise ValueError(
                "; ".join(err["msg"].removeprefix("Value error, ") for err in e.errors())
            ) from None
        return self

    def to_decision(self) -> Decision:
        runs_code = self.type in (DecisionType.ANALYZE, DecisionType.DRILL_DOWN)
        return Decision(
            type=self.type,
            rationale=self.rationale,
            hypothesis_id=self.hypothesis_id,
            code=self.code if runs_code else None,
            conclusion=self.conclusion if self.type == DecisionType.CONCLUDE else None,
            confidence=self.confidence,
            root_causes=[RootCause(**c.model_dump()) for c in self.root_causes],
            reranked=None,  # only a reflection re-ranks
        )


def inert(code: str) -> bool:
    """Code that compiles but cannot be an analysis: no call, and no name it reads that it did not
    bind itself (`.369847,`, a lone comment, `x = 1`). Anything that calls or reads the workspace
    (`df`, `emit(...)`) may be one."""
    nodes = list(ast.walk(ast.parse(code)))
    if any(isinstance(n, ast.Call) for n in nodes):
        return False
    names = [n for n in nodes if isinstance(n, ast.Name)]
    bound = {n.id for n in names if not isinstance(n.ctx, ast.Load)}
    return all(n.id in bound for n in names if isinstance(n.ctx, ast.Load))


class HypothesisUpdate(BaseModel):
    hypothesis_id: str
    status: Literal["INVESTIGATING", "CONFIRMED", "RULED_OUT"]
    evidence: str = Field(description="the numbers that settle it, one sentence")


class StepFinding(BaseModel):
    """What the step's output showed."""

    summary: str = Field(max_length=900, description="two or three sentences with the key numbers")
    updates: list[HypothesisUpdate] = Field(
        default_factory=list, description="status changes the output supports"
    )

    _ids: frozenset[str] = frozenset()

    @model_validator(mode="after")
    def _known(self) -> StepFinding:
        unknown = [u.hypothesis_id for u in self.updates if self._ids and u.hypothesis_id not in self._ids]
        if unknown:
            raise ValueError(f"unknown hypothesis ids {unknown}; use one of {', '.join(sorted(self._ids))}")
        return self

    def to_compressed(self, structured: Compressed, kinds: dict[str, HypothesisKind]) -> Compressed:
        """The library's typed result is the record: its summary, numbers and statuses stand, and the
        model's words follow as commentary, without a trailing JSON fragment. Its updates are added
        only for hypotheses the library's result did not settle (`kinds`: id -> kind). A step with
        no typed result has only the model's reading, and it is the finding."""
        settled = {u.hypothesis_id for u in structured.updates} | {
            hid for hid, kind in kinds.items() if any(u.kind == kind for u in structured.updates)
        }
        ours = [
            Update(hypothesis_id=u.hypothesis_id, status=Status(u.status), evidence=u.evidence)
            for u in self.updates
            if u.hypothesis_id not in settled
        ]
        words = prose(self.summary)
        if typed(structured):
            summary = f"{structured.summary} (Model's reading: {words})" if words else structured.summary
        else:
            summary = words or structured.summary
        return structured.model_copy(update={"summary": summary, "updates": [*structured.updates, *ours]})


def typed(structured: Compressed) -> bool:
    """Whether the library summarised a typed result (a movement, the quality checks, ...)."""
    return any(summarise(r) is not None for r in structured.results)


def prose(text: str) -> str:
    """The model's words up to any JSON it ran into (`..., {"updates": [`)."""
    return re.split(r"[{\[]\s*\"", text, maxsplit=1)[0].strip().rstrip(",:;").strip()


class Reflection(BaseModel):
    """A short self-assessment of the run so far."""

    assessment: str = Field(max_length=600, description="where the investigation stands, two sentences")
    reranked: list[str] = Field(description="open hypothesis ids, most promising first")
    blockers: list[str] = Field(
        default_factory=list,
        max_length=5,
        description="only what needs a human: missing data, an ill-posed question; else empty",
    )

    _ids: frozenset[str] = frozenset()

    @model_validator(mode="after")
    def _known(self) -> Reflection:
        unknown = [h for h in self.reranked if self._ids and h not in self._ids]
        if unknown:
            raise ValueError(f"unknown hypothesis ids {unknown}; use one of {', '.join(sorted(self._ids))}")
        return self


def bound(model: type[M], ids: list[str], must_conclude: bool = False) -> type[M]:
    """A subclass of `model` that checks ids against this run's hypotheses, and whose JSON schema
    names them: a server that enforces the schema (a grammar on llama.cpp, `json_schema` on vLLM
    and OpenAI) then cannot let a small model write an id that is not one (`'798357.26'`, seen
    from SmolLM2), nor a step other than CONCLUDE when the run must conclude.

    Validation state lives in the class, not in instructor's `context=` (which would also run the
    prompt through Jinja templating, and our prompts contain code).
    """
    attrs = {"_ids": frozenset(ids), "_must_conclude": must_conclude, "__doc__": model.__doc__}
    return cast(type[M], type(model.__name__, (_Narrowed, model), attrs))


class _Narrowed:
    """The schema of a `bound` model: hypothesis ids as an enum of this run's, and `type` fixed to
    CONCLUDE when the run must conclude."""

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        schema: dict[str, Any] = super().model_json_schema(*args, **kwargs)  # type: ignore[misc]
        private = getattr(cls, "__private_attributes__", {})  # pydantic keeps the class's defaults here
        ids = private["_ids"].get_default() if "_ids" in private else frozenset()
        must = private["_must_conclude"].get_default() if "_must_conclude" in private else False
        return narrowed(schema, sorted(ids), bool(must))


def narrowed(schema: dict[str, Any], ids: list[str], must_conclude: bool) -> dict[str, Any]:
    """`schema` with every `hypothesis_id` (and `reranked` item) limited to `ids`, and `type`
    (the step's) to CONCLUDE when `must_conclude`; unchanged where `ids` is empty."""

    def visit(node: Any) -> Any:
        if isinstance(node, list):
            return [visit(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {k: visit(v) for k, v in node.items()}
        props = out.get("properties")
        if isinstance(props, dict):
            if ids and "hypothesis_id" in props:
                field = props["hypothesis_id"]
                nullable = any(x.get("type") == "null" for x in field.get("anyOf", []))
                one = {"type": "string", "enum": ids}
                props["hypothesis_id"] = {k: v for k, v in field.items() if k not in ("type", "anyOf")} | (
                    {"anyOf": [one, {"type": "null"}]} if nullable else one
                )
            if ids and isinstance(props.get("reranked"), dict):
                props["reranked"] = props["reranked"] | {"items": {"type": "string", "enum": ids}}
            if must_conclude and "type" in props and "$ref" in props["type"]:
                described = {k: v for k, v in props["type"].items() if k != "$ref"}
                props["type"] = described | {"type": "string", "enum": [DecisionType.CONCLUDE.value]}
        return out

    return cast(dict[str, Any], visit(schema))
