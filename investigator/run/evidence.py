"""Kernel output crosses the line here, once: emitted payloads are parsed into typed analysis
results, and the run keeps the latest result of each kind as `Evidence`.

Anything else the kernel emits (a DataFrame, a list, a payload that does not validate) stays in the
step's printed output for the planner to read, and never becomes evidence.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from investigator.analysis.drivers import DriverSplit
from investigator.analysis.movement import Movement
from investigator.analysis.quality import QualityReport
from investigator.analysis.ratio import RatioDecomposition
from investigator.analysis.seasonality import Seasonality
from investigator.analysis.segments import BroadBased, DrillDown, SegmentExplanation
from investigator.analysis.spec import AnalysisSpec
from investigator.analysis.verify import Verification
from sandbox.models import ExecResult

AnalysisResult = Annotated[
    Movement
    | QualityReport
    | Seasonality
    | SegmentExplanation
    | BroadBased
    | DrillDown
    | RatioDecomposition
    | DriverSplit
    | Verification,
    Field(discriminator="kind"),
]
_RESULT = TypeAdapter(AnalysisResult)
KINDS = frozenset(
    m.model_fields["kind"].default
    for m in (Movement, QualityReport, Seasonality, SegmentExplanation, BroadBased, DrillDown,
              RatioDecomposition, DriverSplit, Verification)
)  # fmt: skip


def parse_results(result: ExecResult) -> list[AnalysisResult]:
    """The typed analysis results among what a step emitted, in order."""
    out: list[AnalysisResult] = []
    for item in result.data:
        payload = item.result
        if not isinstance(payload, dict) or payload.get("kind") not in KINDS:
            continue
        try:
            out.append(_RESULT.validate_python(payload))
        except ValidationError:
            continue  # a forged or damaged payload is not evidence
    return out


class Evidence(BaseModel):
    """The latest structured result of each kind the loop reasons with; one drill per segment."""

    movement: Movement | None = None
    quality: QualityReport | None = None
    seasonality: Seasonality | None = None
    segments: SegmentExplanation | None = None
    ratio: RatioDecomposition | None = None
    drivers: DriverSplit | None = None
    drills: list[DrillDown] = Field(default_factory=list)

    def with_results(self, results: list[AnalysisResult]) -> Evidence:
        """A new `Evidence` with these results laid over the current ones."""
        changes: dict[str, object] = {}
        drills = list(self.drills)
        for r in results:
            if isinstance(r, DrillDown):
                drills = [d for d in drills if d.segment != r.segment] + [r]
            elif isinstance(r, Movement):
                changes["movement"] = r
            elif isinstance(r, QualityReport):
                changes["quality"] = r
            elif isinstance(r, Seasonality):
                changes["seasonality"] = r
            elif isinstance(r, SegmentExplanation):
                changes["segments"] = r
            elif isinstance(r, RatioDecomposition):
                changes["ratio"] = r
            elif isinstance(r, DriverSplit):
                changes["drivers"] = r
        return self.model_copy(update={**changes, "drills": drills})

    def drilled(self, segment: dict[str, str]) -> DrillDown | None:
        return next((d for d in self.drills if d.segment == segment), None)

    @property
    def significant(self) -> bool:
        """Whether the movement is outside normal variation (assumed so until measured)."""
        return self.movement.significant if self.movement is not None else True


def input_notes(spec: AnalysisSpec, evidence: Evidence) -> list[str]:
    """What the report must say about how the input was read: columns left out, units and zones
    assumed (from the spec), and bad values (NaN, infinities) left out of the sums."""
    notes = list(spec.notes)
    bad = sum(i.non_finite for i in (evidence.quality.issues if evidence.quality else []))
    if bad:
        notes.append(
            f"{bad:,} NaN or infinite values of {spec.metric} in the two windows were left out of the "
            "sums and counted as missing values: bad data, never a number."
        )
    return notes


def verification(results: list[AnalysisResult]) -> Verification | None:
    return next((r for r in results if isinstance(r, Verification)), None)
