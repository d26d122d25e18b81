"""Weighted vs equal aggregation, with the weights' refitting inside the interval (issue 23, 8).

The comparison is the cross-validated one of ``judge.calibration._aggregation_comparison``
(weights ``max(kappa_j, 0)`` fit on the other folds, agreement measured on held-out units,
averaged over repeated splits), but its interval resamples *the whole procedure*: each bootstrap
resample of units is split into folds afresh, the weights are refit on its training folds and
the held-out agreement recomputed. The interval then carries the variation of the fitted
weights, which an interval over fixed weights leaves out (with two exchangeable judges that
one says "weighting helps" in 4.8-6.0% of calibrations at a nominal 2.5%).

Ties. The equal vote of an even number of judges ties; a tie rule that always picks one label
(the scale's first) hands the weighted vote, which rarely ties, a win on every tied item whose
gold is the other label: with 70% "yes", 12% of calibrations said weighting helps. Here a tie
(of either method) is split evenly among the tied labels, i.e. scored as the expected value of
a fair coin: a tied item is half right whatever its gold, and neither method gains from ties.
On an ordinal scale an even split is the median's midpoint (a half level), for both methods.

Decision. A one-sided test per dimension, H0: weighted <= equal, with the bootstrap p-value
``(1 + #{D* <= 0}) / (B + 1)``; across the dimensions of a rubric, Holm's step-down correction
at ``ALPHA`` (one-sided 2.5%). Holm, not Benjamini-Hochberg: a "helps" switches that
dimension's scores to weighted aggregation, so each false switch is an error in its own right
and the family-wise error is the guarantee to give; Holm holds it under any dependence between
dimensions (they share judges and items), where Benjamini-Hochberg's false discovery rate
needs positive dependence and tolerates a share of wrong switches.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from judge.reliability._kappa import Weights
from judge.reliability._paired import kappa_from_counts, weight_matrix
from judge.reliability._ranked_refit import (
    RankedDesign,
    ranked_answers,
    ranked_judge_scores,
    ranked_score,
)
from judge.reliability._resample import group_codes, group_draws, n_groups
from judge.reliability._segment_sums import column_sums

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]
Kind = Literal["ordinal", "labels"]

#: one-sided family-wise error rate of "weighting helps" across a rubric's dimensions
ALPHA = 0.025
#: one-sided confidence of the weighted aggregate's like-for-like lower bound (the weighted
#: score's trust test, evidence/TRUST.md section 12)
SINGLE_EXPERT_CONFIDENCE = 0.95
_TIE = 1e-12


@dataclass(frozen=True)
class Design:
    """Judges' answers as codes on one grid (ordinal: ``2 * level index`` on the half-step
    grid, so a midpoint is an integer; labels: label index), -1 for an abstention; the gold
    codes on the same grid; the unit of each item."""

    judges: IntArray  # items x judges
    gold: IntArray
    units: IntArray
    k: int  # categories of the grid
    kind: Kind
    wmat: FloatArray
    #: how a tied vote counts: split evenly (the rule here) or the first label (the panel's
    #: own tie rule, kept to show what it does to the comparison)
    ties: Literal["split", "first"] = "split"
    #: each single expert's codes on the same grid (items x experts, -1 = not labelled), for
    #: the weighted aggregate's like-for-like agreement (none: not measured)
    experts: IntArray | None = None

    @property
    def n_units(self) -> int:
        return n_groups(self.units)


def aggregation_design(
    judges: Sequence[Sequence[int | None]],
    gold: Sequence[float],
    *,
    kind: Kind,
    k: int,
    groups: Sequence[Hashable | None] | None = None,
    weights: Weights = "quadratic",
    experts: Sequence[Sequence[int | None]] | None = None,
) -> Design:
    """From per-item judge codes (``judges[i][j]`` in 0..k-1, None = abstained) and gold
    codes: label indices (``kind="labels"``, unweighted kappa) or ordinal level indices
    (``kind="ordinal"``, ``weights`` on the half-step grid; a gold may be midway, x.5, when an
    even number of experts split). ``groups``: each item's unit (None = its own).
    ``experts``: per-item codes of each single expert (``experts[i][e]``, None = not
    labelled), for the weighted aggregate's like-for-like agreement."""
    matrix = np.array(
        [[-1 if v is None else int(v) for v in row] for row in judges], dtype=np.int64
    )
    g = np.asarray(gold, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != g.size:
        raise ValueError("judges needs one row per item, gold one code per item")
    single = None
    if experts is not None:
        single = np.array(
            [[-1 if v is None else int(v) for v in row] for row in experts], dtype=np.int64
        ).reshape(g.size, -1)
    if kind == "ordinal":  # the half-step grid: level i -> 2i, midpoints odd
        matrix = np.where(matrix >= 0, 2 * matrix, -1)
        single = None if single is None else np.where(single >= 0, 2 * single, -1)
        codes = np.round(2 * g).astype(np.int64)
        grid = 2 * k - 1
        w: Weights = weights
    else:
        codes = g.astype(np.int64)
        grid = k
        w = None
    return Design(
        matrix,
        codes,
        group_codes(g.size, groups),
        grid,
        kind,
        weight_matrix(grid, w),
        experts=single if single is not None and single.shape[1] else None,
    )


def _answers(d: Design, weights: FloatArray) -> FloatArray:
    """Each item's answer as a distribution over the grid, per row of ``weights``
    (resamples x judges): weighted median (ordinal) or weighted vote (labels), ties split."""
    r = weights.shape[0]
    n, judges = d.judges.shape
    answered = d.judges >= 0
    w = weights[:, None, :] * answered[None, :, :]  # r x n x J
    out = np.zeros((r, n, d.k), dtype=np.float64)
    if d.kind == "labels":
        mass = np.zeros((r, n, d.k), dtype=np.float64)
        items = np.arange(n)
        for j in range(judges):  # one answer per item and judge: no repeated index
            mass[:, items, np.maximum(d.judges[:, j], 0)] += w[:, :, j]
        top = mass.max(axis=2, keepdims=True)
        winners = (mass >= top - _TIE) & (top > 0)
        if d.ties == "first":
            first = np.argmax(winners, axis=2)
            winners = (np.arange(d.k)[None, None, :] == first[:, :, None]) & (top > 0)
        count = winners.sum(axis=2, keepdims=True)
        out = np.where(count > 0, winners / np.maximum(count, 1), 0.0)
        return out
    # weighted median: sort each item's answers, accumulate weight, find the half
    order = np.argsort(np.where(answered, d.judges, np.iinfo(np.int64).max), axis=1)
    values = np.take_along_axis(d.judges, order, axis=1)  # n x J (abstentions last)
    ws = np.take_along_axis(w, np.broadcast_to(order, (r, n, judges)), axis=2)
    cum = np.cumsum(ws, axis=2)
    half = cum[:, :, -1:] / 2
    above = cum > half + _TIE * np.maximum(1.0, half)
    at = np.abs(cum - half) <= _TIE * np.maximum(1.0, half)
    first_above = np.argmax(above, axis=2)  # r x n
    value = values[np.arange(n)[None, :], first_above]
    # an exact split at a boundary: the midpoint of that value and the next weighted one
    split = at.any(axis=2) & (half[:, :, 0] > 0)
    split_at = np.argmax(at, axis=2)
    low = values[np.arange(n)[None, :], split_at]
    midpoint = (low + value) // 2
    code = np.where(split, midpoint, value)
    has = half[:, :, 0] > 0
    rows, items = np.nonzero(has)
    out[rows, items, code[rows, items]] = 1.0
    return out


def _kappa(
    d: Design, answers: FloatArray, item_weights: FloatArray, gold: IntArray | None = None
) -> FloatArray:
    """Kappa of the answer distributions against gold (or another column of reference codes,
    -1 = none), per resample (item multiplicities)."""
    weighted = (item_weights[:, :, None] * answers).transpose(0, 2, 1)  # r x k x n
    tables = column_sums(weighted, d.gold if gold is None else gold, d.k)  # r x k x k
    return kappa_from_counts(tables.reshape(len(item_weights), -1), d.k, d.wmat)


def _single_expert_kappa(d: Design, answers: FloatArray, item_weights: FloatArray) -> FloatArray:
    """The mean over single experts of the answers' kappa against each (like for like with
    expert pairs), per resample; NaN without experts or where one kappa is undefined."""
    if d.experts is None:
        return np.full(len(item_weights), np.nan)
    parts = [_kappa(d, answers, item_weights, column) for column in d.experts.T]
    out: FloatArray = np.mean(parts, axis=0)
    return out


def _judge_kappas(d: Design, item_weights: FloatArray) -> FloatArray:
    """Each judge's kappa against gold over its answered items (resamples x judges)."""
    judges = d.judges.shape[1]
    out = np.empty((len(item_weights), judges), dtype=np.float64)
    for j in range(judges):
        codes = np.where(d.judges[:, j] >= 0, d.judges[:, j] * d.k + d.gold, -1)
        out[:, j] = kappa_from_counts(column_sums(item_weights, codes, d.k * d.k), d.k, d.wmat)
    return out


def _fit(kappas: FloatArray) -> FloatArray:
    """``max(kappa, 0)`` per judge; equal weights (ones) where a judge's kappa is undefined
    or every weight is zero (as the service falls back to equal aggregation)."""
    w = np.maximum(kappas, 0.0)
    bad = ~np.isfinite(kappas).all(axis=1) | ~(np.nan_to_num(w).sum(axis=1) > 0)
    return np.where(bad[:, None], 1.0, np.nan_to_num(w))


def _choices(d: Design | RankedDesign, weights: FloatArray) -> FloatArray:
    """Each item's aggregate answer per row of ``weights``, a distribution (ties split)."""
    return ranked_answers(d, weights) if isinstance(d, RankedDesign) else _answers(d, weights)


def _agreement(d: Design | RankedDesign, answers: FloatArray, item_w: FloatArray) -> FloatArray:
    """The scale's statistic of ``answers`` against gold, per resample."""
    if isinstance(d, RankedDesign):
        return ranked_score(d, answers, item_w)
    return _kappa(d, answers, item_w)


def _judge_scores(d: Design | RankedDesign, item_w: FloatArray) -> FloatArray:
    """Each judge's own statistic against gold (resamples x judges): the weights' basis."""
    return (
        ranked_judge_scores(d, item_w) if isinstance(d, RankedDesign) else _judge_kappas(d, item_w)
    )


def _slots(d: Design | RankedDesign) -> int:
    return int(d.points.shape[2]) if isinstance(d, RankedDesign) else d.k


def _judge_count(d: Design | RankedDesign) -> int:
    return d.n_judges if isinstance(d, RankedDesign) else int(d.judges.shape[1])


def cv_difference(
    d: Design | RankedDesign,
    unit_draws: FloatArray,
    *,
    folds: int,
    repeats: int,
    rng: np.random.Generator,
    refit: bool = True,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """(weighted - equal, equal, weighted against single experts) kappa per row of
    ``unit_draws`` (resamples x units), the weighted ones out of fold and averaged over
    ``repeats`` random splits of the drawn units (the last NaN without ``d.experts``).
    ``refit=False`` fits each split's weights once, on the sample (the draws then only
    resample the evaluation): the interval that holds weights fixed."""
    r = unit_draws.shape[0]
    item_w = unit_draws[:, d.units]
    equal = _agreement(d, _choices(d, np.ones((1, _judge_count(d)))), item_w)
    weighted = np.zeros(r, dtype=np.float64)
    single = np.zeros(r, dtype=np.float64)
    for _ in range(repeats):
        shuffled = rng.random((r if refit else 1, d.n_units))
        fold_of_unit = np.argsort(np.argsort(shuffled, axis=1), axis=1) % folds  # rank % folds
        tables_answers = np.zeros((r, d.gold.size, _slots(d)), dtype=np.float64)
        for f in range(folds):
            test_items = (fold_of_unit == f)[:, d.units]  # (r or 1) x n
            train_w = (unit_draws if refit else np.ones((1, d.n_units)))[:, d.units] * ~test_items
            weights = _fit(_judge_scores(d, train_w))
            answers = _choices(d, weights)
            tables_answers += answers * test_items[:, :, None]
        weighted += _agreement(d, tables_answers, item_w)
        if isinstance(d, Design):
            single += _single_expert_kappa(d, tables_answers, item_w)
        else:
            single += np.nan
    weighted /= repeats
    return weighted - equal, equal, single / repeats


@dataclass(frozen=True)
class WeightedComparison:
    """The difference weighted - equal (estimate, two-sided interval, one-sided lower bound at
    1 - ``ALPHA``) and its one-sided bootstrap p-value for H0: weighted <= equal; each
    aggregate's agreement (the weighted one out of fold) with its interval from the same
    resamples (``*_ci``; the weighted one includes the refitting)."""

    equal: float
    difference: float
    low: float
    high: float
    lower: float
    p_value: float
    n: int
    units: int
    resamples: int
    weighted: float = math.nan
    equal_ci: tuple[float, float] = (math.nan, math.nan)
    weighted_ci: tuple[float, float] = (math.nan, math.nan)
    #: the weighted aggregate's mean kappa against single experts (out of fold), its
    #: two-sided interval and one-sided lower bound at ``SINGLE_EXPERT_CONFIDENCE`` from the
    #: same refit resamples (NaN without the experts' columns)
    single_expert: float = math.nan
    single_expert_ci: tuple[float, float] = (math.nan, math.nan)
    single_expert_lower: float = math.nan


def _lower(values: FloatArray, confidence: float) -> float:
    """The one-sided percentile lower bound at ``confidence``; an undefined resample counts
    at -1 (NaN when every resample is undefined for want of experts)."""
    if not np.isfinite(values).any():
        return math.nan
    return float(np.quantile(np.where(np.isfinite(values), values, -1.0), 1 - confidence))


def _interval(values: FloatArray) -> tuple[float, float]:
    """The two-sided percentile interval at 1 - 2 ``ALPHA``; an undefined resample counts
    at the bottom of the scale (-1), against the interval."""
    low, high = np.quantile(np.where(np.isfinite(values), values, -1.0), [ALPHA, 1 - ALPHA])
    return float(low), float(high)


def compare_weighted(
    d: Design | RankedDesign,
    *,
    folds: int = 2,
    repeats: int = 5,
    n_resamples: int = 1000,
    seed: int = 0,
    refit: bool = True,
    between: Callable[[], None] = lambda: None,
    estimate_repeats: int | None = None,
) -> WeightedComparison:
    """The module docstring's comparison on one dimension. Resamples where either kappa is
    undefined count against weighting (difference at its worst, -2). ``repeats`` splits per
    resample, ``estimate_repeats`` (default: ``repeats``) for the estimate on the sample,
    which costs one resample's worth each: more there steadies the estimate, while every
    resample's own fresh split is already part of the bootstrap distribution. ``between`` is
    called before every block of resamples (a caller that wants to stop raises there)."""
    rng = np.random.default_rng(seed)
    diff, equal, single = cv_difference(
        d,
        np.ones((1, d.n_units)),
        folds=folds,
        repeats=estimate_repeats or repeats,
        rng=rng,
        refit=refit,
    )
    pairs = []
    for draws in group_draws(d.n_units, n_resamples, seed + 1):
        between()
        pairs.append(cv_difference(d, draws, folds=folds, repeats=repeats, rng=rng, refit=refit))
    boot = np.concatenate([p[0] for p in pairs])
    boot_equal = np.concatenate([p[1] for p in pairs])
    boot_weighted = boot + boot_equal
    boot_single = np.concatenate([p[2] for p in pairs])
    boot = np.where(np.isfinite(boot), boot, -2.0)
    low, high, lower = np.quantile(boot, [ALPHA, 1 - ALPHA, ALPHA])
    p = (1 + int(np.sum(boot <= 0))) / (n_resamples + 1)
    return WeightedComparison(
        equal=float(equal[0]),
        difference=float(diff[0]),
        low=float(low),
        high=float(high),
        lower=float(lower),
        p_value=p,
        n=int(d.gold.size),
        units=d.n_units,
        resamples=n_resamples,
        weighted=float(diff[0] + equal[0]),
        equal_ci=_interval(boot_equal),
        weighted_ci=_interval(boot_weighted),
        single_expert=float(single[0]),
        single_expert_ci=_interval(boot_single),
        single_expert_lower=_lower(boot_single, SINGLE_EXPERT_CONFIDENCE),
    )


def holm(p_values: Sequence[float], alpha: float = ALPHA) -> list[bool]:
    """Holm's step-down rejections at family-wise level ``alpha`` (NaN p-values never
    rejected), in the input order."""
    order = sorted(
        (i for i, p in enumerate(p_values) if math.isfinite(p)), key=lambda i: p_values[i]
    )
    m = len(order)
    reject = [False] * len(p_values)
    for rank, i in enumerate(order):
        if p_values[i] > alpha / (m - rank):
            break
        reject[i] = True
    return reject
