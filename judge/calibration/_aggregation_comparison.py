"""Equal vs reliability-weighted aggregation, cross-validated on a calibration's items.

Per dimension, repeated K-fold (default: 2 folds, i.e. weights fit on one half and agreement
measured on the other, 10 repeats): for each fold, each judge's agreement with the experts'
consensus is measured on the *other* folds only, weights are ``max(agreement, 0)``, and the
held-out items are aggregated with them. Every item so gets one out-of-fold weighted
aggregate per repeat; agreement is never measured on items the weights were fit on. The
equal aggregate needs no fitting (it is the panel's own). Reported: the equal and the
weighted aggregate's agreement (the weighted one averaged over repeats) with percentile
bootstrap CIs, and their difference with the paired bootstrap CI (every resample draws the
same items, or groups, for both; the difference is averaged over repeats per resample).

The CI treats each fold's fitted weights as given: it carries the items' sampling variation,
not that of re-fitting the weights (averaging over repeats smooths the latter). Weighting
counts as helping on a dimension only when the CI's lower bound is above zero.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
from judge.calibration._scored import ScoredItem
from judge.domain.aggregation_choice import WEIGHT_METHOD, reliability_weights
from judge.domain.calibration_report import (
    AggregationComparison,
    AgreementEstimate,
    DifferenceEstimate,
)
from judge.domain.report_model import Interval
from judge.domain.rubric import Dimension, RankedScale, Tolerance
from judge.panel.aggregate import weighted_aggregate
from judge.reliability import (
    ResampledStatistic,
    fold_assignments,
    kappa_statistic,
    label_codes,
    ordinal_codes,
    paired_comparison,
    ratio_statistic,
)

DEFAULT_FOLDS = 2
DEFAULT_REPEATS = 10
DEFAULT_RESAMPLES = 1000
NOTE = (
    "weights fit on the other folds only; agreement measured on held-out items; the "
    "difference's CI is a paired bootstrap over items (groups when items carry one)"
)


def _hits(
    dim: Dimension, pred: Sequence[Any], gold: Sequence[Any], items: Sequence[ScoredItem]
) -> tuple[list[float], list[float]]:
    """Chance-corrected Recall@1 terms per item: (hit - 1/k, 1 - 1/k)."""
    scale = dim.scale
    assert isinstance(scale, RankedScale)
    num: list[float] = []
    den: list[float] = []
    for p, g, it in zip(pred, gold, items, strict=True):
        chance = 1.0 / max(1, len(scale.label_ids(it.participants)))
        first = p[0] if isinstance(p, list) and p else p
        num.append((1.0 if first == top1(g) else 0.0) - chance)
        den.append(1.0 - chance)
    return num, den


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


def _statistics(
    dim: Dimension, columns: list[list[Any]], gold: list[Any], items: Sequence[ScoredItem]
) -> list[ResampledStatistic]:
    """One resampled statistic per prediction column, all against ``gold`` on one scale."""
    if participant_labels(dim):
        return [ratio_statistic(*_hits(dim, col, gold, items)) for col in columns]
    if dim.scale.type == "ordinal":
        codes, k = ordinal_codes([*columns, gold], levels(dim))
        weights: Any = "quadratic"
    else:
        codes, k = label_codes([[top1(v) for v in col] for col in [*columns, gold]])
        weights = None
    *pred_codes, gold_codes = codes
    return [kappa_statistic(c, gold_codes, k, weights) for c in pred_codes]


def _weighted_column(
    dim: Dimension,
    items: Sequence[ScoredItem],
    judges: list[str],
    tolerance: Tolerance,
    weights: dict[str, float] | None,
    equal: list[Any],
    test: Sequence[int],
    out: list[Any],
) -> None:
    for i in test:
        it = items[i]
        if weights is None:
            out[i] = equal[i]  # a fold whose weights could not be fit: equal aggregation
            continue
        models = [m for m in judges if it.judges.get(m, {}).get(dim.id) is not None]
        ratings = [it.judges[m][dim.id] for m in models]
        agg = weighted_aggregate(
            dim, ratings, [weights[m] for m in models], tolerance, it.participants
        )
        out[i] = agg.score


class ComparisonStopped(Exception):
    """The caller of :func:`compare_aggregation` asked it to stop."""


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
    resamples: int = DEFAULT_RESAMPLES,
    should_stop: Callable[[], bool] = lambda: False,
) -> AggregationComparison:
    """The cross-validated comparison on ``items`` (with consensus ``gold``) of one dimension.
    The equal aggregate is each item's panel score; items without one (quorum not met) are
    left out of both. ``should_stop`` is asked between repeats: when it answers True, the
    work ends with :class:`ComparisonStopped` (its caller no longer wants the result)."""
    keep = [i for i, it in enumerate(items) if it.aggregate.get(dim.id) is not None]
    kept = [items[i] for i in keep]
    gold_kept = [gold[i] for i in keep]
    equal = [it.aggregate[dim.id] for it in kept]
    groups = [it.resampling_group for it in kept]
    units = resampling_units(groups)
    full = {
        m: judge_agreement(dim, [it.judges.get(m, {}).get(dim.id) for it in kept], gold_kept, kept)
        for m in judges
    }
    weights_all_items = reliability_weights(full, judges)

    def comparison(**outcome: Any) -> AggregationComparison:
        return AggregationComparison(
            weight_method=WEIGHT_METHOD,
            weights=weights_all_items,
            folds=folds,
            repeats=repeats,
            seed=seed,
            resamples=resamples,
            n=len(kept),
            units=units,
            note=NOTE,
            **outcome,
        )

    if len(judges) < 2:
        return comparison(evaluated=False, weighting_helps=None, why="a single judge")
    if units < folds * MIN_RESAMPLING_UNITS:
        why = f"{units} independent units: fewer than {MIN_RESAMPLING_UNITS} per fold"
        return comparison(evaluated=False, weighting_helps=None, why=why)
    weighted_columns: list[list[Any]] = []
    for assignment in fold_assignments(groups, len(kept), folds=folds, repeats=repeats, seed=seed):
        if should_stop():
            raise ComparisonStopped
        column: list[Any] = [None] * len(kept)
        for fold in range(folds):
            train = [i for i in range(len(kept)) if assignment[i] != fold]
            test = [i for i in range(len(kept)) if assignment[i] == fold]
            train_items = [kept[i] for i in train]
            fitted = {
                m: judge_agreement(
                    dim,
                    [it.judges.get(m, {}).get(dim.id) for it in train_items],
                    [gold_kept[i] for i in train],
                    train_items,
                )
                for m in judges
            }
            weights = reliability_weights(fitted, judges)
            _weighted_column(dim, kept, judges, tolerance, weights, equal, test, column)
        weighted_columns.append(column)
    equal_stat, *weighted_stats = _statistics(dim, [equal, *weighted_columns], gold_kept, kept)
    result = paired_comparison(
        equal_stat,
        weighted_stats,
        n=len(kept),
        groups=groups,
        n_resamples=resamples,
        seed=seed,
    )
    low = result.difference_ci95[0]
    helps = math.isfinite(low) and low > 0
    return comparison(
        evaluated=True,
        equal=AgreementEstimate(agreement=finite(result.baseline), ci95=_ci(result.baseline_ci95)),
        weighted=AgreementEstimate(
            agreement=finite(result.candidate), ci95=_ci(result.candidate_ci95)
        ),
        difference=DifferenceEstimate(
            estimate=(finite(result.difference) or 0.0) + 0.0, ci95=_ci(result.difference_ci95)
        ),
        weighting_helps=helps,
        why=(
            "the paired CI of weighted - equal lies above zero"
            if helps
            else "the paired CI of weighted - equal reaches zero or below: no gain shown"
        ),
    )


def _ci(pair: tuple[float, float]) -> Interval:
    low, high = (None if v is None else v + 0.0 for v in (finite(pair[0]), finite(pair[1])))
    return (low, high)  # no -0.0
