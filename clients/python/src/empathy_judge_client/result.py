"""Judgments, per-dimension results and the score result (docs/DESIGN.md section 3)."""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

from empathy_judge_client.guarantees import ItemGuarantee, PredictionSet, ScoreInterval

#: Why an LLM call gave no usable reply after its retries (every client path reports these).
#: ``auth_error`` and ``unknown_model`` are configuration failures: they stop a run.
CallFailure = Literal[
    "timed_out",
    "rate_limit",
    "provider_error",
    "refused",
    "auth_error",
    "bad_request",
    "unknown_model",
]
#: Why a judge gave no rating for a dimension: its call failed, or its reply was cut at the
#: token limit (``truncated``) or could not be read (``unparseable``). Never a score.
AbstentionReason = Literal[CallFailure, "unparseable", "truncated"]
#: every reason code, for bounded metric labels and documentation
ABSTENTION_REASONS: frozenset[str] = frozenset(get_args(AbstentionReason))
CALL_FAILURES: frozenset[str] = frozenset(get_args(CallFailure))


class CallRecord(BaseModel):
    """One logical LLM call (a first attempt and its retries, or a repair)."""

    model_config = ConfigDict(frozen=True)

    requested_model: str
    resolved_model: str | None
    params: dict[str, Any]
    prompt_hash: str
    purpose: Literal["judge", "repair"]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    latency_ms: float
    attempts: int
    cached: bool = False
    outcome: str
    #: of ``prompt_tokens``: read from / written to the provider's prompt cache (priced at the
    #: provider's cached rates in ``cost_usd``)
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0
    raw_reply: str | None = None
    #: the LLM simulator sent the reply (judge.domain.provenance); absent when false
    simulated: bool = Field(default=False, exclude_if=lambda v: not v)


class SampleInfo(BaseModel):
    """A judge's k samples on one dimension (panel option ``samples``): the values, their
    spread (ordinal: max - min; else 1 - modal share) and whether they disagree beyond the
    rubric's tolerance."""

    values: list[Any]
    spread: float | None = None
    unstable: bool = False


class JudgeRating(BaseModel):
    """One judge on one dimension: a rating, or an abstention with its reason.
    ``self_preference``: the judged reply came from this judge's model family, and its rating
    was ``excluded`` from the aggregate or ``kept`` (and the dimension flagged)."""

    model: str
    rating: Any = None
    rationale: str | None = None
    status: Literal["ok", "abstained"]
    reason: AbstentionReason | None = None
    detail: str | None = None
    samples: SampleInfo | None = None
    self_preference: Literal["excluded", "kept"] | None = None


class Agreement(BaseModel):
    valid: int
    quorum: int
    spread: float | None = None
    modal_share: float | None = None
    tie: bool | None = None
    tied_labels: list[Any] | None = None
    top1_agreement: float | None = None


class ReliabilityFlag(BaseModel):
    """docs/DESIGN.md section 2. ``n``, ``ci95`` and ``coverage`` describe the judge agreement that
    decided the flag (null when it came from a published prior); ``metric`` names that
    statistic; ``expert_source`` says where ``expert_kappa`` came from; ``simulated`` marks a
    flag sourced from a calibration whose panel had a simulator persona."""

    level: Literal["trusted", "caution", "untrusted"]
    reasons: list[str]
    expert_kappa: float | None
    judge_kappa: float | None
    threshold: float
    floor: float
    source: str
    metric: str | None = None
    n: int | None = None
    #: independent units behind ``n`` (what ``min_items`` is compared with); absent from
    #: flags stored before units were counted
    units: int | None = Field(default=None, exclude_if=lambda v: v is None)
    ci95: list[float | None] | None = None
    coverage: float | None = None
    min_items: int | None = None
    expert_source: str | None = None
    simulated: bool = False


class AggregationInfo(BaseModel):
    """How ``score`` was aggregated: ``equal`` or ``weighted`` (each judge's ``weights`` from
    the calibration ``source``); ``reason`` says why this method applies; ``equal_score`` is
    what equal aggregation gives (calibration runs measure it, whatever the panel used)."""

    method: Literal["equal", "weighted"]
    reason: str
    weights: dict[str, float] | None = None
    weight_method: str | None = None
    source: str | None = None
    equal_score: Any = None


class DimensionResult(BaseModel):
    score: Any = None
    scale: dict[str, Any]
    polarity: str
    judges: list[JudgeRating]
    agreement: Agreement
    reliability: ReliabilityFlag
    aggregation: AggregationInfo | None = None
    #: item-level guarantees (empathy_judge_client.guarantees), with a guarantee policy and a
    #: calibration
    interval: ScoreInterval | None = None
    prediction_set: PredictionSet | None = None
    guarantee: ItemGuarantee | None = None
    #: cascade panels: the stage (0-based) whose judges gave this answer
    stage: int | None = None


class Usage(BaseModel):
    """What LLM calls used. ``cache_hits``: calls this service answered from its own reply
    cache (no call made); ``cached_prompt_tokens`` / ``cache_write_tokens``: prompt tokens the
    provider read from / wrote to its prompt cache (part of ``prompt_tokens``)."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cache_hits: int = 0
    cached_prompt_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            llm_calls=self.llm_calls + other.llm_calls,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost_usd=round(self.cost_usd + other.cost_usd, 8),
            cache_hits=self.cache_hits + other.cache_hits,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
        )


class StageUsage(Usage):
    """One cascade stage on one item: its judges, the dimensions it was asked, the ones it
    answered (kept, or escalated at the last stage) and what its new calls cost."""

    stage: int
    judges: list[str]
    dimensions: list[str]
    answered: list[str]


class PanelMember(BaseModel):
    model: str
    resolved_model: str | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    simulated: bool = False


class ScoreResult(BaseModel):
    id: str | None
    status: Literal["completed", "failed", "running", "queued"]
    rubric: dict[str, str]
    panel_name: str
    panel: list[PanelMember]
    dimensions: dict[str, DimensionResult]
    summary: dict[str, Any]
    input_flags: list[str]
    usage: Usage
    timings_ms: dict[str, float]
    metadata: dict[str, Any] = Field(default_factory=dict)
    simulated: bool = False
    calls: list[CallRecord] = Field(default_factory=list)
    #: ``human`` when a guarantee policy applies and some dimension is not guaranteed: a person
    #: must look at this item (GET /v1/batches/{id}/escalations lists them)
    escalate: Literal["human"] | None = None
    #: cascade panels: calls, tokens and cost per stage (stages no dimension reached: absent)
    stages: list[StageUsage] | None = None
