"""A judged session on the wire (``GET /v1/sessions/{id}``): every checkpoint's judgments, the
trajectory they trace and the supporter's measures across the session (README, "Sessions")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from empathy_judge_client.calibration_report import RubricRef

Level = Literal["trusted", "caution", "untrusted"]
#: worst first: the order in which levels combine
LEVELS: tuple[Level, ...] = ("untrusted", "caution", "trusted")


def worst(levels: list[Level]) -> Level:
    """The least trusted of ``levels`` (trusted when there is none)."""
    return min(levels, key=LEVELS.index, default="trusted")


class TurnRef(BaseModel):
    """One turn of the session: who spoke and, for the supporter's turns, whom it addressed
    (``to`` as given with the session, or inferred: the client who spoke last)."""

    index: int
    speaker: str
    to: list[str] = Field(default_factory=list)
    to_inferred: bool = False


class Window(BaseModel):
    """The turns ``[start, end)`` a task's judges saw; ``truncated`` when the oldest turns
    of the task's window were dropped to fit the item size limit."""

    start: int
    end: int
    truncated: bool = False


class CheckpointDimension(BaseModel):
    """One dimension at a checkpoint: the panel's score (a free-text dimension: the first
    valid judge's text) and its reliability level and reasons."""

    score: Any = None
    level: Level
    reasons: list[str] = Field(default_factory=list)


class Checkpoint(BaseModel):
    """A client turn the session was judged at (``index`` into the session's turns)."""

    index: int
    speaker: str
    status: Literal["queued", "running", "completed", "failed"]
    windows: dict[str, Window]
    dimensions: dict[str, CheckpointDimension] = Field(default_factory=dict)
    #: the supporter spoke the next turn (null at the last turn)
    supporter_next: bool | None = None
    error: str | None = None


class MemberPoint(BaseModel):
    index: int
    emotion: str | None = None
    intensity: float | None = None
    level: Level = "trusted"


class RelationPoint(BaseModel):
    index: int
    pattern: str | None
    level: Level


class Transition(BaseModel):
    """The judged relation pattern changed between two consecutive judged checkpoints."""

    at: int
    source: str
    target: str


class SupportPoint(BaseModel):
    index: int
    intervene_now: bool | None = None
    support_target: str | None = None
    supporter_next: bool | None = None
    level: Level = "trusted"


class Trajectory(BaseModel):
    """Per member focus emotion and intensity over time; the relation pattern per checkpoint
    with its transitions (``transition_counts[source][target]``); intervene-now and the
    top support target per checkpoint."""

    members: dict[str, list[MemberPoint]] = Field(default_factory=dict)
    relation: list[RelationPoint] = Field(default_factory=list)
    transitions: list[Transition] = Field(default_factory=list)
    transition_counts: dict[str, dict[str, int]] = Field(default_factory=dict)
    support: list[SupportPoint] = Field(default_factory=list)


class MeasureFlag(BaseModel):
    """How far a measure can be trusted: the worst level among the judgments it rests on
    (``rests_on`` names their dimensions), at least caution when its inputs were inferred
    or too few."""

    level: Level
    reasons: list[str] = Field(default_factory=list)
    rests_on: list[str] = Field(default_factory=list)


class Measure(BaseModel):
    """One supporter measure (README, "Sessions": each one's definition and inputs)."""

    value: float | None
    unit: str
    flag: MeasureFlag
    n: int = 0


class SupporterMeasures(BaseModel):
    supporter: str
    most_distressed: str | None = None
    barrel: dict[str, Measure] = Field(default_factory=dict)
    ripple: dict[str, Measure] = Field(default_factory=dict)
    timing: dict[str, Measure] = Field(default_factory=dict)


class SessionView(BaseModel):
    """A submitted session, its progress and (as far as judged) its analysis."""

    id: str
    batch_id: str
    status: str
    rubric: RubricRef
    panel_name: str
    supporter: str
    created_at: str
    total: int
    completed: int
    failed: int
    simulated: bool = False
    turns: list[TurnRef] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    trajectory: Trajectory = Field(default_factory=Trajectory)
    measures: SupporterMeasures | None = None
