"""Score one item with a panel: judges run concurrently, then aggregate and flag per dimension."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from judge.domain.aggregation_choice import WEIGHT_METHOD, AggregationMode, choose_aggregation
from judge.domain.flags import (
    JUDGE_UNSTABLE,
    LENGTH_SENSITIVE,
    SELF_PREFERENCE_EXCLUDED,
    SELF_PREFERENCE_KEPT,
    Calibration,
    reliability_flag,
    weighted_flag,
    with_label_reliability,
)
from judge.domain.guarantees import GuaranteePolicy
from judge.domain.injection import contains_instructions
from judge.domain.item import Item
from judge.domain.item_fit import check_item_fits
from judge.domain.providers import model_family
from judge.domain.result import (
    AggregationInfo,
    Agreement,
    CallRecord,
    DimensionResult,
    JudgeRating,
    PanelMember,
    SampleInfo,
    ScoreResult,
    StageUsage,
    Usage,
)
from judge.domain.rubric import Dimension, ReliabilityPolicy, Rubric, Tolerance
from judge.errors import JudgeMisconfigured
from judge.llm.client import CONFIGURATION_FAILURES, ChatClient
from judge.panel.aggregate import Aggregate, aggregate, weighted_aggregate
from judge.panel.guarantee import Stage, item_guarantee
from judge.panel.judge_call import JudgeOutcome, JudgeTarget, run_judge
from judge.panel.samples import SampledOutcome, combine_samples

INSTRUCTIONS_FLAG = "input_contains_instructions"


@dataclass(frozen=True)
class Panel:
    """A resolved panel: judges with endpoints, the quorum and the call mode."""

    name: str
    judges: tuple[JudgeTarget, ...]
    quorum: int | None = None
    per_dimension_calls: bool = False
    simulated: bool = False  # every judge is a simulator persona
    includes_simulator: bool = False  # at least one judge is a simulator persona
    aggregation: AggregationMode = "auto"  # see judge.domain.aggregation_choice
    self_preference: str = "exclude"  # exclude | keep (a judge of the judged model's family)
    guarantee: GuaranteePolicy | None = None  # wins over the rubric's (judge.domain.guarantees)
    cascade: tuple[tuple[str, ...], ...] | None = None  # each stage's judge models, cheapest first

    def policy(self, policy: ReliabilityPolicy) -> ReliabilityPolicy:
        """``policy`` with this panel's guarantee policy, when it has one."""
        if self.guarantee is None:
            return policy
        return policy.model_copy(update={"guarantee": self.guarantee})

    def signature(self) -> str:
        """Identifies the panel's composition (models, parameters, samples and endpoint per
        judge) for calibration and probe lookups, so that a run applies only to a panel
        answering where it answered; a single-sample judge on the provider's own endpoint
        keeps its earlier form."""
        parts = sorted(
            f"{j.model}|{sorted(j.params.items())}"
            + (f"|@{j.endpoint()}" if j.endpoint() else "")
            + (
                f"|k={j.samples}|{sorted(j.sample_params.items())}|seeds={j.sample_seeds}"
                if j.samples > 1
                else ""
            )
            for j in self.judges
        )
        return ";".join(parts)

    def calls_per_item(self) -> int:
        """LLM calls one item costs without repairs or cache hits (samples x judges)."""
        return sum(j.samples for j in self.judges)


async def _judge_all(
    dimensions: list[Dimension],
    samples: int,
    tolerance: Tolerance,
    once: Callable[[int], Awaitable[JudgeOutcome]],
) -> SampledOutcome:
    """The judge's ``samples`` independent samples (``once(sample)``), combined per dimension."""
    parts = await asyncio.gather(*(once(sample) for sample in range(max(1, samples))))
    return combine_samples(dimensions, list(parts), tolerance)


async def _judge_once(
    client: ChatClient,
    rubric: Rubric,
    item: Item,
    target: JudgeTarget,
    dimensions: list[Dimension],
    per_dimension: bool,
    use_cache: bool,
    sample: int,
) -> JudgeOutcome:
    if not per_dimension:
        return await run_judge(
            client, rubric, item, target, dimensions, use_cache=use_cache, sample=sample
        )
    parts = await asyncio.gather(
        *(
            run_judge(client, rubric, item, target, [d], use_cache=use_cache, sample=sample)
            for d in dimensions
        )
    )
    ratings = {k: v for p in parts for k, v in p.ratings.items()}
    abstentions = {k: v for p in parts for k, v in p.abstentions.items()}
    resolved = next((p.resolved_model for p in parts if p.resolved_model), None)
    return JudgeOutcome(
        target.model, resolved, ratings, abstentions, [c for p in parts for c in p.calls]
    )


def _scale_info(dim: Dimension) -> dict[str, Any]:
    scale = dim.scale
    info: dict[str, Any] = {"type": scale.type}
    if scale.type == "ordinal":
        info |= {"min": scale.min, "max": scale.max}
    elif scale.type == "nominal":
        info["labels"] = list(scale.label_ids)
    elif scale.type == "ranked":
        info |= {"k": scale.k, "labels": list(scale.label_ids())}
        if scale.include_participants:
            info["include_participants"] = True
    return info


def _summary(rubric: Rubric, dims: dict[str, DimensionResult]) -> dict[str, Any]:
    """Mean of ordinal scores rescaled to 0..1 (proscriptive ones reversed), untrusted excluded."""
    used, excluded, values = [], [], []
    for dim in rubric.dimensions:
        result = dims[dim.id]
        if dim.scale.type != "ordinal" or result.score is None:
            continue
        if result.reliability.level == "untrusted":
            excluded.append(dim.id)
            continue
        scale = dim.scale
        value = (float(result.score) - scale.min) / (scale.max - scale.min)
        values.append(1 - value if dim.polarity == "proscriptive" else value)
        used.append(dim.id)
    score = round(sum(values) / len(values), 4) if values else None
    return {"score": score, "range": [0, 1], "dimensions": used, "excluded_untrusted": excluded}


def _own_family_judges(panel: Panel, item: Item) -> frozenset[str]:
    """Judges of the family that generated the judged reply (``metadata.generator_model``)."""
    generator = item.metadata.get("generator_model")
    if not isinstance(generator, str) or not generator.strip():
        return frozenset()
    family = model_family(generator)
    if family is None:
        return frozenset()
    return frozenset(t.model for t in panel.judges if (t.family or model_family(t.model)) == family)


def _answered_simulated(outcome: JudgeOutcome) -> bool:
    """Whether any of a judge's replies came from the simulator (its reply mark)."""
    return any(c.simulated for c in outcome.calls)


def _stop_if_misconfigured(outcomes: list[JudgeOutcome]) -> None:
    """A judge that cannot be called at all fails the item instead of abstaining on it: every
    other item would abstain the same way (see :data:`CONFIGURATION_FAILURES`)."""
    for outcome in outcomes:
        for abstention in outcome.abstentions.values():
            if abstention.reason in CONFIGURATION_FAILURES:
                raise JudgeMisconfigured(outcome.model, abstention.reason, abstention.detail)


def _aggregate_dimension(
    dim: Dimension,
    valid: list[Any],
    models: list[str],
    panel: Panel,
    calibration: Calibration | None,
    policy: ReliabilityPolicy,
    participants: tuple[str, ...],
) -> tuple[Aggregate, AggregationInfo | None]:
    """The dimension's aggregate, equal or reliability-weighted as the panel's ``aggregation``
    and the applicable calibration decide
    (:func:`judge.domain.aggregation_choice.choose_aggregation`)."""
    equal = aggregate(dim, valid, policy.tolerance, participants)
    if dim.scale.type == "free_text":
        return equal, None
    choice = choose_aggregation(
        panel.aggregation, calibration, [t.model for t in panel.judges], policy
    )
    source = f"calibration:{choice.run_id}" if choice.run_id else None
    if choice.weights is None:
        return equal, AggregationInfo(method="equal", reason=choice.reason, source=source)
    weights = [choice.weights.get(m, 0.0) for m in models]
    if valid and not any(w > 0 for w in weights):
        info = AggregationInfo(
            method="equal",
            reason="no_weight_among_answering_judges",
            weights=dict(choice.weights),
            weight_method=WEIGHT_METHOD,
            source=source,
        )
        return equal, info
    weighted = weighted_aggregate(dim, valid, weights, policy.tolerance, participants)
    info = AggregationInfo(
        method="weighted",
        reason=choice.reason,
        weights=dict(choice.weights),
        weight_method=WEIGHT_METHOD,
        source=source,
        equal_score=equal.score,
    )
    return weighted, info


@dataclass(frozen=True)
class _Scoring:
    """What every dimension of one item is scored with."""

    rubric: Rubric
    item: Item
    panel: Panel
    client: ChatClient
    use_cache: bool
    policy: ReliabilityPolicy
    calibrations: Mapping[str, Calibration]
    length_sensitive: frozenset[str]
    own_family: frozenset[str]
    participants: tuple[str, ...]
    input_flags: tuple[str, ...]

    async def judge(self, target: JudgeTarget, dimensions: list[Dimension]) -> SampledOutcome:
        """``target``'s (sampled) ratings of ``dimensions``."""
        once = partial(
            _judge_once,
            self.client,
            self.rubric,
            self.item,
            target,
            dimensions,
            self.panel.per_dimension_calls,
            self.use_cache,
        )
        return await _judge_all(dimensions, target.samples, self.policy.tolerance, once)


def _dimension_result(
    ctx: _Scoring,
    panel: Panel,
    dim: Dimension,
    sampled: list[SampledOutcome],
    stage: Stage | None = None,
) -> DimensionResult:
    """One dimension from ``panel``'s judges' outcomes (``sampled``, in judge order); a
    cascade stage's quorum is at most its number of judges."""
    outcomes = [s.outcome for s in sampled]
    # where each judge's replies came from, whatever its name (judge.domain.provenance)
    member_simulated = [panel.simulated or _answered_simulated(o) for o in outcomes]
    quorum = panel.quorum or ctx.policy.quorum
    if stage is not None:
        quorum = min(quorum, len(panel.judges))
    judges: list[JudgeRating] = []
    valid: list[Any] = []
    valid_models: list[str] = []
    judge_flags: list[str] = []
    for outcome, sampling in zip(outcomes, sampled, strict=True):
        if dim.id in outcome.ratings:
            rated = outcome.ratings[dim.id]
            samples = sampling.samples.get(dim.id)
            if samples is not None and samples.unstable:
                judge_flags.append(JUDGE_UNSTABLE)
            own = outcome.model in ctx.own_family
            excluded = own and panel.self_preference == "exclude"
            if own:
                judge_flags.append(SELF_PREFERENCE_EXCLUDED if excluded else SELF_PREFERENCE_KEPT)
            if not excluded:
                valid.append(rated.rating)
                valid_models.append(outcome.model)
            judges.append(
                JudgeRating(
                    model=outcome.model,
                    rating=rated.rating,
                    rationale=rated.rationale,
                    status="ok",
                    samples=(
                        SampleInfo(
                            values=samples.values,
                            spread=samples.spread,
                            unstable=samples.unstable,
                        )
                        if samples is not None
                        else None
                    ),
                    self_preference=(None if not own else "excluded" if excluded else "kept"),
                )
            )
        else:
            why = outcome.abstentions[dim.id]
            judges.append(
                JudgeRating(
                    model=outcome.model,
                    status="abstained",
                    reason=why.reason,
                    detail=why.detail,
                )
            )
    calibration = ctx.calibrations.get(dim.id)
    agg, how = _aggregate_dimension(
        dim, valid, valid_models, panel, calibration, ctx.policy, ctx.participants
    )
    enough = len(valid) >= quorum
    if how is not None and not enough:
        how.equal_score = None  # withheld like the score
    extra = ctx.input_flags + tuple(dict.fromkeys(judge_flags))
    if dim.id in ctx.length_sensitive:
        extra += (LENGTH_SENSITIVE,)
    if dim.scale.type == "free_text":
        extra += ("free_text_not_aggregated",)
    # a weighted score has its own evidence (judge.domain.flags.weighted_flag)
    flag_of = weighted_flag if how is not None and how.method == "weighted" else reliability_flag
    flag = flag_of(
        policy=ctx.policy,
        prior=dim.prior,
        calibration=calibration,
        valid_judges=len(valid),
        quorum=quorum,
        disagreement=agg.disagreement,
        extra_caution=extra,
        scores_simulated=panel.includes_simulator or any(member_simulated),
    )
    flag = with_label_reliability(flag, calibration, agg.score if enough else None)
    equal = how.equal_score if how is not None and how.method == "weighted" else agg.score
    answered = [j for j in judges if j.status == "ok"]
    interval, prediction_set, guarantee = item_guarantee(
        dim,
        [j.rating for j in answered],
        equal if enough else None,
        calibration,
        ctx.policy,
        ctx.participants,
        [j.samples.values if j.samples is not None else None for j in answered],
        stage,
    )
    return DimensionResult(
        score=agg.score if enough else None,
        scale=_scale_info(dim),
        polarity=dim.polarity,
        judges=judges,
        agreement=Agreement(
            valid=len(valid),
            quorum=quorum,
            spread=agg.spread,
            modal_share=agg.modal_share,
            tie=agg.tie,
            tied_labels=agg.tied_labels,
            top1_agreement=agg.top1_agreement,
        ),
        reliability=flag,
        aggregation=how,
        interval=interval,
        prediction_set=prediction_set,
        guarantee=guarantee,
        stage=None if stage is None else stage.index,
    )


def _usage(calls: list[CallRecord]) -> Usage:
    return Usage(
        llm_calls=sum(c.attempts for c in calls if not c.cached),
        prompt_tokens=sum(c.prompt_tokens for c in calls),
        completion_tokens=sum(c.completion_tokens for c in calls),
        cost_usd=round(sum(c.cost_usd for c in calls), 8),
        cache_hits=sum(1 for c in calls if c.cached),
        cached_prompt_tokens=sum(c.cached_prompt_tokens for c in calls),
        cache_write_tokens=sum(c.cache_write_tokens for c in calls),
    )


def _merge(before: SampledOutcome | None, new: SampledOutcome) -> SampledOutcome:
    """One judge's outcome over the dimensions of several cascade stages."""
    if before is None:
        return new
    a, b = before.outcome, new.outcome
    return SampledOutcome(
        JudgeOutcome(
            a.model,
            a.resolved_model or b.resolved_model,
            a.ratings | b.ratings,
            a.abstentions | b.abstentions,
            a.calls + b.calls,
        ),
        before.samples | new.samples,
    )


def _judged(sampled: SampledOutcome | None) -> set[str]:
    if sampled is None:
        return set()
    return set(sampled.outcome.ratings) | set(sampled.outcome.abstentions)


def _escalated(result: DimensionResult) -> DimensionResult:
    """The last stage's unconfident answer: a person decides (reason ``escalated``)."""
    g = result.guarantee
    if g is None or g.reason != "below_confidence_threshold":
        return result
    return result.model_copy(update={"guarantee": g.model_copy(update={"reason": "escalated"})})


async def _run_cascade(
    ctx: _Scoring, stages: tuple[tuple[str, ...], ...]
) -> tuple[dict[str, DimensionResult], dict[str, SampledOutcome], list[StageUsage]]:
    """Stage by stage: a dimension is kept at the first stage whose confidence clears that
    stage's calibrated threshold; the next stage's judges are called only for the dimensions
    still open (and a judge of an earlier stage is not called again)."""
    by_model = {t.model: t for t in ctx.panel.judges}
    judged: dict[str, SampledOutcome] = {}
    results: dict[str, DimensionResult] = {}
    usage: list[StageUsage] = []
    open_dims = list(ctx.rubric.dimensions)
    for index, models in enumerate(stages):
        if not open_dims:
            break
        asked = {m: [d for d in open_dims if d.id not in _judged(judged.get(m))] for m in models}
        asked = {m: dims for m, dims in asked.items() if dims}
        fresh = await asyncio.gather(*(ctx.judge(by_model[m], d) for m, d in asked.items()))
        _stop_if_misconfigured([f.outcome for f in fresh])
        for model, sampled in zip(asked, fresh, strict=True):
            judged[model] = _merge(judged.get(model), sampled)
        sub = replace(ctx.panel, judges=tuple(by_model[m] for m in models))
        last = index == len(stages) - 1
        answered = []
        for dim in open_dims:
            result = _dimension_result(
                ctx, sub, dim, [judged[m] for m in models], Stage(index, stages)
            )
            kept = result.guarantee is not None and result.guarantee.guaranteed
            if kept or last:
                results[dim.id] = result if kept else _escalated(result)
                answered.append(dim.id)
        usage.append(
            StageUsage(
                stage=index,
                judges=list(models),
                dimensions=[d.id for d in open_dims],
                answered=answered,
                **_usage([c for f in fresh for c in f.outcome.calls]).model_dump(),
            )
        )
        open_dims = [d for d in open_dims if d.id not in results]
    ordered = {d.id: results[d.id] for d in ctx.rubric.dimensions}
    return ordered, judged, usage


async def score_item(
    *,
    rubric: Rubric,
    item: Item,
    panel: Panel,
    client: ChatClient,
    calibrations: Mapping[str, Calibration] | None = None,
    use_cache: bool = True,
    policy: ReliabilityPolicy | None = None,
    length_sensitive: frozenset[str] = frozenset(),
) -> ScoreResult:
    """Score ``item``; ``calibrations`` maps dimension id to this panel's calibration, if any;
    ``policy`` overrides the rubric's reliability policy (e.g. with the settings' defaults);
    ``length_sensitive`` names dimensions the panel's latest verbosity probe marked; a cascade
    panel runs its stages in turn (:func:`_run_cascade`)."""
    check_item_fits(item, rubric)
    started = time.perf_counter()
    ctx = _Scoring(
        rubric=rubric,
        item=item,
        panel=panel,
        client=client,
        use_cache=use_cache,
        policy=panel.policy(policy or rubric.reliability),
        calibrations=calibrations or {},
        length_sensitive=length_sensitive,
        own_family=_own_family_judges(panel, item),
        participants=tuple(p.id for p in item.clients),
        input_flags=(INSTRUCTIONS_FLAG,) if contains_instructions(item) else (),
    )
    stages: list[StageUsage] | None = None
    if panel.cascade is None:
        sampled = await asyncio.gather(
            *(ctx.judge(t, list(rubric.dimensions)) for t in panel.judges)
        )
        _stop_if_misconfigured([s.outcome for s in sampled])
        dims = {d.id: _dimension_result(ctx, panel, d, list(sampled)) for d in rubric.dimensions}
        ran: list[SampledOutcome | None] = list(sampled)
    else:
        dims, judged, stages = await _run_cascade(ctx, panel.cascade)
        ran = [judged.get(t.model) for t in panel.judges]
    outcomes = [s.outcome for s in ran if s is not None]
    member_simulated = [
        panel.simulated or (s is not None and _answered_simulated(s.outcome)) for s in ran
    ]
    calls = [c for o in outcomes for c in o.calls]
    elapsed = (time.perf_counter() - started) * 1000
    judge_ms = {o.model: round(sum(c.latency_ms for c in o.calls), 2) for o in outcomes}
    return ScoreResult(
        id=item.id,
        status="completed",
        rubric={"id": rubric.id, "version": rubric.version, "hash": rubric.content_hash},
        panel_name=panel.name,
        panel=[
            PanelMember(
                model=t.model,
                resolved_model=s.outcome.resolved_model if s is not None else None,
                params=t.params,
                simulated=simulated,
            )
            for t, s, simulated in zip(panel.judges, ran, member_simulated, strict=True)
        ],
        dimensions=dims,
        summary=_summary(rubric, dims),
        input_flags=list(ctx.input_flags),
        usage=_usage(calls),
        timings_ms={"total": round(elapsed, 2), **{f"judge:{k}": v for k, v in judge_ms.items()}},
        metadata=dict(item.metadata),
        simulated=panel.simulated
        or all(m for m, s in zip(member_simulated, ran, strict=True) if s is not None),
        calls=calls,
        escalate="human"
        if any(g.guarantee and not g.guarantee.guaranteed for g in dims.values())
        else None,
        stages=stages,
    )
