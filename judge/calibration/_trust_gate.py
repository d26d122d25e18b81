"""What decides ``trusted`` for one dimension of a calibration run (issue 23, evidence/TRUST.md).

- *Distinct experts*: a column that repeats another expert's (identical, or near-identical on
  enough items: :func:`judge.reliability.distinct_annotators`) is the same annotator twice; it
  counts once, and says so in the report.
- *The experts' baseline*: the mean kappa over the pairs of distinct experts with its
  cluster-robust interval; the gate compares the interval, not the point, with the floor.
- *Like-for-like trust*: the panel's kappa against each single distinct expert, averaged, with
  every abstention counted as the worst answer (abstaining where it would disagree cannot
  raise it); trusted when its one-sided 95% lower bound clears the line (outside its Monte
  Carlo error), on at least five independent units, and every consensus level present holds
  ``MIN_UNITS_PER_LEVEL`` units. A consensus midway between two levels (an even number of
  experts) is no level of the scale: it counts towards neither neighbour.
- *Prevalence paradox*: when the most frequent whole consensus level holds more than 80% of
  the items, two or more distinct experts labelled and the like-for-like kappa's lower bound
  is above 0, the line test is AC2's instead: the panel's mean AC2 against single experts
  minus the experts' mean pairwise AC2 (D) must be above the 95th percentile of its
  permutation distribution (raters relabelled item by item: the panel as one more expert;
  :mod:`judge.reliability._prevalence_trust`).

Scales without a pooled kappa (a ranked scale of the session's participants) have neither
test; their flag keeps the gate of :mod:`judge.domain.flags`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from judge.calibration._rater_stats import (
    RESAMPLE_SEED,
    finite,
    label_set,
    levels,
    participant_labels,
    top1,
)
from judge.domain.calibration_report import LikeForLike
from judge.domain.rubric import Dimension, ReliabilityPolicy
from judge.reliability import (
    MIN_UNITS_PER_LEVEL,
    ExpertBaseline,
    KappaInterval,
    Weights,
    ac2_reasons,
    ac2_versus_experts,
    check_levels,
    distinct_annotators,
    dominant_level,
    expert_baseline,
    like_for_like_trust,
    worst_case_answers,
)

#: the kappa line test's reasons, replaced by the AC2 test's under the prevalence paradox
LINE_REASONS = ("lower_bound_below_line", "lower_bound_within_monte_carlo_error_of_line")


@dataclass(frozen=True)
class _Scale:
    levels: list[float] | None
    weighted: bool

    def values(self, column: Sequence[Any]) -> list[Any]:
        return list(column) if self.levels is not None else [top1(v) for v in column]


def _scale(dim: Dimension) -> _Scale | None:
    kind = dim.scale.type
    if kind == "ordinal":
        return _Scale(levels(dim), True)
    if kind in ("nominal", "binary") or (kind == "ranked" and not participant_labels(dim)):
        return _Scale(None, False)
    return None


def distinct_experts(columns: dict[str, list[Any]]) -> tuple[list[str], list[str]]:
    """The experts that count as distinct annotators (in order; a repeated column counts for
    the first expert that had it) and, per repeat, why it was not counted."""
    kept: list[str] = []
    refused: list[str] = []
    for name, column in columns.items():
        for other in kept:
            check = distinct_annotators(columns[other], column)
            if not check.distinct and check.n >= 2:
                refused.append(f"{name} repeats {other}: {check.reason}")
                break
        else:
            kept.append(name)
    return kept, refused


@dataclass(frozen=True)
class TrustGate:
    """The dimension's distinct experts, their baseline (None: fewer than two) and the
    like-for-like test (None: a scale without a pooled kappa)."""

    distinct: list[str]
    not_distinct: list[str]
    baseline: ExpertBaseline | None
    like_for_like: LikeForLike | None

    def expert_interval(self) -> KappaInterval | None:
        iv = self.baseline.interval if self.baseline else None
        return iv if iv is not None and iv.refused is None else None


def _whole_levels(gold: Sequence[Any], scale: _Scale) -> list[Hashable | None]:
    if scale.levels is None:
        return [top1(g) for g in gold]
    return [g if g is not None and float(g).is_integer() else None for g in gold]


def _level_name(level: Hashable) -> str:
    if isinstance(level, float) and level.is_integer():
        return str(int(level))
    return str(level)


def trust_gate(
    dim: Dimension,
    panel: Sequence[Any],
    gold: Sequence[Any],
    experts: dict[str, list[Any]],
    groups: Sequence[Hashable | None],
    policy: ReliabilityPolicy,
    resamples: int,
) -> TrustGate:
    """The module docstring's tests on the items with a consensus (``gold``), the panel's
    aggregate (None = abstained) and the experts' columns, aligned by item; ``groups`` are
    the independent units."""
    distinct, not_distinct = distinct_experts(experts)
    scale = _scale(dim)
    if scale is None or not distinct:
        return TrustGate(distinct, not_distinct, None, None)
    weights: Weights = "quadratic" if scale.weighted else None
    columns = {e: scale.values(experts[e]) for e in distinct}
    # what every interval of this dimension shares: the scale, the units, the resamples
    shared: dict[str, Any] = {
        "levels": scale.levels,
        "weights": weights,
        "groups": groups,
        "n_resamples": resamples,
        "seed": RESAMPLE_SEED,
    }
    baseline = expert_baseline(columns, **shared) if len(distinct) >= 2 else None
    pred, consensus = scale.values(panel), scale.values(gold)
    answers = worst_case_answers(pred, consensus, scale.levels)
    try:
        decision = like_for_like_trust(
            answers,
            columns,
            line=policy.line,
            min_units_per_level=0,  # checked below, on whole levels
            **shared,
        )
    except ValueError:  # one label among the panel and every expert: kappa is undefined
        return TrustGate(distinct, not_distinct, baseline, None)
    scale_levels = scale.levels if scale.levels is not None else label_set(dim) or []
    whole = _whole_levels(gold, scale)
    level_check = check_levels(whole, groups, scale_levels)
    reasons = list(decision.reasons)
    if not level_check.passes:
        reasons.append("levels_below_minimum_units")
    iv = decision.interval
    mc = iv.lower_mc
    prevalence = dominant_level(whole, groups)
    ac2: KappaInterval | None = None
    if (
        prevalence is not None
        and prevalence.paradox
        and len(distinct) >= 2
        and iv.refused is None
        and iv.lower > 0  # kappa shows agreement beyond chance (no constant judge)
    ):
        ac2 = ac2_versus_experts(answers, columns, **shared)
        reasons = [r for r in reasons if r not in LINE_REASONS] + ac2_reasons(ac2)
        if ac2.refused is not None:
            reasons.append("too_few_units")
    ac2_mc = ac2.lower_mc if ac2 is not None else None
    like = LikeForLike(
        statistic=decision.statistic + ", abstentions counted as the worst answer",
        estimate=finite(iv.estimate),
        ci95=(finite(iv.low), finite(iv.high)),
        lower=finite(iv.lower),
        lower_mc=(finite(mc.low), finite(mc.high)) if mc is not None else None,
        n=iv.n,
        units=iv.units,
        abstentions_as_misses=sum(
            1 for p, g in zip(pred, consensus, strict=True) if p is None and g is not None
        ),
        line=policy.line,
        per_expert={e: finite(k) for e, k in decision.per_expert.items()},
        consensus_kappa=finite(decision.consensus_kappa),
        levels={_level_name(k): v for k, v in level_check.counts.items()},
        min_units_per_level=MIN_UNITS_PER_LEVEL,
        reasons=list(dict.fromkeys(reasons)),
        trusted=not reasons,
        coefficient="ac2" if ac2 is not None else "kappa",
        dominant_share=finite(prevalence.share) if prevalence is not None else None,
        ac2_difference=finite(ac2.estimate) if ac2 is not None else None,
        ac2_ci95=(finite(ac2.low), finite(ac2.high)) if ac2 is not None else None,
        ac2_lower=finite(ac2.lower) if ac2 is not None else None,
        ac2_lower_mc=(finite(ac2_mc.low), finite(ac2_mc.high)) if ac2_mc is not None else None,
    )
    return TrustGate(distinct, not_distinct, baseline, like)
