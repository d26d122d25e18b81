"""Equal vs reliability-weighted aggregation, cross-validated on a calibration's items.

Per dimension, repeated K-fold (2 folds, i.e. weights fit on one half and agreement measured
on the other): for each fold, each judge's agreement with the experts' consensus is measured
on the *other* folds only, weights are ``max(agreement, 0)``, and the held-out items are
aggregated with them; agreement is never measured on items the weights were fit on.

Ordinal, binary and nominal scales (:func:`judge.reliability.compare_weighted`, evidence/
TRUST.md section 8): the interval resamples the whole procedure (each bootstrap resample of
units is split afresh and the weights refit inside it), a tied vote of either aggregate is
split evenly among the tied labels (no win from a tie rule), and the one-sided bootstrap
p-value of H0: weighted <= equal is collected over the rubric's dimensions, where Holm's
step-down correction at one-sided 2.5% decides (:func:`apply_holm`): ``weighting_helps`` is
Holm's rejection. ``REFIT_RESAMPLES`` resamples and ``REFIT_REPEATS`` splits per resample
keep the report's cost within about 1.5x of the equal-only report (evidence/TRUST.md, phase 4).

Ranked scales (weighted Borda, :func:`judge.reliability.ranked_design`) take the same test:
each aggregate's first choice (a Borda tie goes to the tied labels with the most first places,
then splits evenly) is scored by the ranked
report's statistic, chance-corrected Recall@1 with the chance from the column's own first
choices (on a scale of fixed labels that is Cohen's kappa of the first choices), the judges'
weights by the same statistic, and the weights refit in every resample (evidence/TRUST.md
section 8b). No single-expert (like-for-like) bound is measured there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from judge.calibration._rater_stats import (
    MIN_RESAMPLING_UNITS,
    RESAMPLE_SEED,
    agreement,
    finite,
    levels,
    participant_labels,
    resampling_units,
    top1,
)
from judge.calibration._scored import ScoredItem, expert_column, experts_labelling
from judge.calibration._trust_gate import distinct_experts
from judge.domain.aggregation_choice import WEIGHT_METHOD, reliability_weights
from judge.domain.calibration_report import (
    AggregationComparison,
    AgreementEstimate,
    DifferenceEstimate,
    HolmDecision,
    LikeForLikeEstimate,
)
from judge.domain.report_model import Interval
from judge.domain.rubric import Dimension, RankedScale, Tolerance
from judge.reliability import (
    ALPHA,
    SINGLE_EXPERT_CONFIDENCE,
    AggregationDesign,
    RankedDesign,
    aggregation_design,
    compare_weighted,
    holm,
    marginal_chances,
    ranked_design,
)

DEFAULT_FOLDS = 2
#: random splits per bootstrap resample of the refit test (each resample splits afresh)
REFIT_REPEATS = 1
#: random splits averaged for the estimate on the sample
ESTIMATE_REPEATS = 10
#: resamples of the refit test: the p-value's Monte Carlo SE is 0.005 at p = 0.025, and the
#: smallest p, 1/1001, still clears Holm's first threshold (0.025 / m) for up to 25 dimensions
REFIT_RESAMPLES = 1000
DEFAULT_REPEATS = REFIT_REPEATS
NOTE = (
    "weights fit on the other folds only; agreement measured on held-out items; the "
    "bootstrap refits the weights in every resample of units (groups when items carry "
    "one); tied votes split evenly; decided by Holm across the rubric's dimensions"
)
RANKED_NOTE = (
    "weights fit on the other folds only; agreement (chance-corrected Recall@1 of the "
    "weighted Borda first choice, chance from the column's own first choices) measured on "
    "held-out items; the bootstrap refits the weights in every resample of units (groups when "
    "items carry one); a Borda tie goes to the most first places, then splits evenly; decided "
    "by Holm across the rubric's dimensions"
)


def _hits(
    dim: Dimension, pred: Sequence[Any], gold: Sequence[Any], items: Sequence[ScoredItem]
) -> tuple[list[float], list[float]]:
    """Chance-corrected Recall@1 terms per item, (hit - chance, 1 - chance), with chance from
    the column's own first choices (:func:`judge.reliability.marginal_chances`); an item the
    column left unanswered is a miss at chance 1/k."""
    scale = dim.scale
    assert isinstance(scale, RankedScale)
    candidates = [scale.label_ids(it.participants) for it in items]
    firsts = [p[0] if isinstance(p, list) and p else p for p in pred]
    golds = [top1(g) for g in gold]
    answered = [i for i, f in enumerate(firsts) if f is not None]
    shared = [scale.group_label] if scale.group_label else []
    chances = [1.0 / max(1, len(c)) for c in candidates]
    for i, c in zip(
        answered,
        marginal_chances(
            [firsts[i] for i in answered],
            [golds[i] for i in answered],
            [candidates[i] for i in answered],
            shared=shared,
        ),
        strict=True,
    ):
        chances[i] = c
    num = [(1.0 if f == g else 0.0) - c for f, g, c in zip(firsts, golds, chances, strict=True)]
    return num, [1.0 - c for c in chances]


def judge_agreement(
    dim: Dimension, pred: Sequence[Any], gold: Sequence[Any], items: Sequence[ScoredItem]
) -> float | None:
    """A judge's agreement with the consensus over the items it answered (the flag's metric)."""
    keep = [i for i, p in enumerate(pred) if p is not None]
    if not keep:
        return None
    if participant_labels(dim):
        num, den = _hits(
            dim, [pred[i] for i in keep], [gold[i] for i in keep], [items[i] for i in keep]
        )
        total = sum(den)
        return sum(num) / total if total else None
    value = agreement(dim, [pred[i] for i in keep], [gold[i] for i in keep])
    return value if math.isfinite(value) else None


class ComparisonStopped(Exception):
    """The caller of :func:`compare_aggregation` asked it to stop."""


def single_experts(dim: Dimension, items: Sequence[ScoredItem]) -> list[list[Any]]:
    """The columns of the distinct experts (:func:`distinct_experts`) who labelled the
    dimension on ``items``, as rows per item (None: not labelled by that expert)."""
    columns = {e: expert_column(items, e, dim.id) for e in experts_labelling(items, dim.id)}
    distinct, _ = distinct_experts(columns)
    return [[columns[e][i] for e in distinct] for i in range(len(items))]


def _design(
    dim: Dimension,
    items: Sequence[ScoredItem],
    gold: Sequence[Any],
    judges: list[str],
    groups: Sequence[Hashable | None],
) -> AggregationDesign:
    """The refit test's codes: ordinal level indices (a judge's off-level rating, e.g. a
    sampled median, to the nearest level; the gold may sit midway), or label indices; each
    distinct expert's codes alike (the weighted aggregate's like-for-like agreement)."""
    answers = [[it.judges.get(m, {}).get(dim.id) for m in judges] for it in items]
    experts = single_experts(dim, items)
    if dim.scale.type == "ordinal":
        grid = levels(dim)
        low, k = grid[0], len(grid)

        def code(v: Any) -> int | None:
            return None if v is None else min(k - 1, max(0, math.floor(float(v) - low + 0.5)))

        return aggregation_design(
            [[code(v) for v in row] for row in answers],
            [float(g) - low for g in gold],
            kind="ordinal",
            k=k,
            groups=groups,
            experts=[[code(v) for v in row] for row in experts],
        )
    index: dict[str, int] = {}
    every = [*answers, *experts]
    for value in [*(top1(v) for row in every for v in row), *(top1(g) for g in gold)]:
        if value is not None:
            index.setdefault(str(value), len(index))

    def label_code(v: Any) -> int | None:
        first = top1(v)
        return None if first is None else index[str(first)]

    return aggregation_design(
        [[label_code(v) for v in row] for row in answers],
        [float(index[str(top1(g))]) for g in gold],
        kind="labels",
        k=max(len(index), 2),
        groups=groups,
        experts=[[label_code(v) for v in row] for row in experts],
    )


def _ranked_design(
    dim: Dimension,
    items: Sequence[ScoredItem],
    gold: Sequence[Any],
    judges: list[str],
    groups: Sequence[Hashable | None],
) -> RankedDesign:
    """The refit test's rankings of a ranked scale: each judge's top-k list per item, the
    consensus's first choice, the item's candidates; the scale's fixed labels and its group
    label mean the same on every item, participants count by their position."""
    scale = dim.scale
    assert isinstance(scale, RankedScale)
    shared = [label.id for label in scale.labels]
    if scale.group_label:
        shared.append(scale.group_label)
    return ranked_design(
        [[it.judges.get(m, {}).get(dim.id) or None for m in judges] for it in items],
        [top1(g) for g in gold],
        [scale.label_ids(it.participants) for it in items],
        k=scale.k,
        shared=shared,
        groups=groups,
    )


def compare_aggregation(
    dim: Dimension,
    items: Sequence[ScoredItem],
    gold: list[Any],
    judges: list[str],
    tolerance: Tolerance,
    *,
    folds: int = DEFAULT_FOLDS,
    repeats: int = DEFAULT_REPEATS,
    seed: int = RESAMPLE_SEED,
    resamples: int = REFIT_RESAMPLES,
    should_stop: Callable[[], bool] = lambda: False,
) -> AggregationComparison:
    """The cross-validated comparison on ``items`` (with consensus ``gold``) of one dimension,
    decided on its own (one-sided p below 2.5%) until :func:`apply_holm` decides it across
    the rubric. The equal aggregate is each item's panel score; items without one (quorum not
    met) are left out of both. ``should_stop`` is asked before every block of resamples:
    when it answers True, the work ends with :class:`ComparisonStopped`."""
    keep = [i for i, it in enumerate(items) if it.aggregate.get(dim.id) is not None]
    kept = [items[i] for i in keep]
    gold_kept = [gold[i] for i in keep]
    groups = [it.resampling_group for it in kept]
    units = resampling_units(groups)
    full = {
        m: judge_agreement(dim, [it.judges.get(m, {}).get(dim.id) for it in kept], gold_kept, kept)
        for m in judges
    }
    ranked = dim.scale.type == "ranked"

    def comparison(**outcome: Any) -> AggregationComparison:
        return AggregationComparison(
            weight_method=WEIGHT_METHOD,
            weights=reliability_weights(full, judges),
            folds=folds,
            repeats=repeats,
            seed=seed,
            resamples=resamples,
            n=len(kept),
            units=units,
            note=RANKED_NOTE if ranked else NOTE,
            **outcome,
        )

    if len(judges) < 2:
        return comparison(evaluated=False, weighting_helps=None, why="a single judge")
    if units < folds * MIN_RESAMPLING_UNITS:
        why = f"{units} independent units: fewer than {MIN_RESAMPLING_UNITS} per fold"
        return comparison(evaluated=False, weighting_helps=None, why=why)

    def between() -> None:
        if should_stop():
            raise ComparisonStopped

    between()
    design = (
        _ranked_design(dim, kept, gold_kept, judges, groups)
        if ranked
        else _design(dim, kept, gold_kept, judges, groups)
    )
    result = compare_weighted(
        design,
        folds=folds,
        repeats=repeats,
        n_resamples=resamples,
        seed=seed,
        between=between,
        estimate_repeats=max(repeats, ESTIMATE_REPEATS),
    )
    alone = result.p_value < ALPHA
    return comparison(
        evaluated=True,
        equal=AgreementEstimate(agreement=finite(result.equal), ci95=_ci(result.equal_ci)),
        weighted=AgreementEstimate(agreement=finite(result.weighted), ci95=_ci(result.weighted_ci)),
        weighted_like_for_like=(
            None
            if math.isnan(result.single_expert)
            else LikeForLikeEstimate(
                agreement=finite(result.single_expert),
                ci95=_ci(result.single_expert_ci),
                lower=finite(result.single_expert_lower),
                confidence=SINGLE_EXPERT_CONFIDENCE,
            )
        ),
        difference=DifferenceEstimate(
            estimate=(finite(result.difference) or 0.0) + 0.0, ci95=_ci((result.low, result.high))
        ),
        p_value=round(result.p_value, 6),
        ties="split",
        weighting_helps=alone,
        why=_why(result.p_value, ALPHA, alone),
    )


def _why(p: float, threshold: float, helps: bool) -> str:
    if helps:
        return f"p = {p:.4f} <= {threshold:.4f}: the weighted aggregate agrees better"
    return f"p = {p:.4f}: no gain shown at {threshold:.4f}"


def apply_holm(comparisons: Mapping[str, AggregationComparison]) -> None:
    """Decide ``weighting_helps`` of every dimension with a refit p-value by Holm's step-down
    correction over all of them (family-wise one-sided ``ALPHA``), in place."""
    tested = [d for d, c in comparisons.items() if c.p_value is not None]
    p_values = [comparisons[d].p_value or 1.0 for d in tested]
    rejected = holm(p_values, ALPHA)
    order = sorted(range(len(tested)), key=lambda i: p_values[i])
    m = len(tested)
    reached = True
    for rank, i in enumerate(order):
        threshold = ALPHA / (m - rank)
        comparison = comparisons[tested[i]]
        comparison.holm = HolmDecision(
            dimensions=m,
            alpha=ALPHA,
            rank=rank,
            threshold=round(threshold, 6),
            reached=reached,
            rejected=rejected[i],
        )
        comparison.weighting_helps = rejected[i]
        comparison.why = _why(p_values[i], threshold, rejected[i]) + (
            f" (Holm over {m} dimensions"
            + ("" if reached else ", not reached: a smaller p-value was not rejected")
            + ")"
        )
        reached = reached and rejected[i]


def _ci(pair: tuple[float, float]) -> Interval:
    low, high = (None if v is None else v + 0.0 for v in (finite(pair[0]), finite(pair[1])))
    return (low, high)  # no -0.0
