"""One rater's agreement with the experts' consensus on one dimension (pure, no I/O).

Used by :mod:`judge.calibration._report`. Every figure comes with the number of items
behind it; rates come twice, over the items the rater answered and with an abstention
counted as a miss (``*_abstain_as_miss``); kappa has the evidence gate's cluster-robust
interval (evidence/TRUST.md, section 1), rates a percentile bootstrap CI; both resample
independent units (a session's checkpoints, a post's replies, a conversation submitted more
than once: :mod:`judge.calibration._units`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

from judge.domain.calibration_report import MajorityBaseline, Prevalence
from judge.domain.rater_report import ConfusionMatrix, RaterStats
from judge.domain.rubric import Dimension
from judge.reliability import (
    MIN_UNITS,
    KappaInterval,
    MonteCarloInterval,
    bootstrap_ratio_ci,
    cohens_kappa,
    fleiss_kappa,
    gwet_ac1,
    gwet_ac2,
    kappa_interval,
    krippendorff_alpha,
    marginal_chance_recall_at_1,
    scale_grid,
    scale_kappa,
    weighted_kappa,
)

RESAMPLE_SEED = 17
#: fewer independent units (groups, or items without a group) than this give no interval: a
#: bootstrap over one session (RESCUE's family subset) would return a zero-width "CI"
MIN_RESAMPLING_UNITS = MIN_UNITS


def resampling_units(groups: Sequence[Hashable | None]) -> int:
    """How many independent units a bootstrap over these items draws from."""
    return len({("g", g) if g is not None else ("i", i) for i, g in enumerate(groups)})


CHANCE_R1 = "chance_corrected_recall_at_1"


def finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else round(x, 4)


def ci(pair: tuple[float, float]) -> list[float | None]:
    return [finite(pair[0]), finite(pair[1])]


def mc_interval(mc: MonteCarloInterval | None) -> tuple[float | None, float | None] | None:
    """A bound's Monte Carlo interval as stored (None: none, a deterministic bound)."""
    return None if mc is None else (finite(mc.low), finite(mc.high))


def top1(value: Any) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def participant_labels(dim: Dimension) -> bool:
    """A ranked scale whose labels are the session's participants: no pooled kappa."""
    return dim.scale.type == "ranked" and bool(getattr(dim.scale, "include_participants", False))


def metric_name(dim: Dimension) -> str | None:
    """The statistic that decides a dimension's flag."""
    if participant_labels(dim):
        return CHANCE_R1
    return {
        "ordinal": "quadratic_weighted_kappa",
        "nominal": "cohens_kappa",
        "binary": "cohens_kappa",
        "ranked": "cohens_kappa_top1",
    }.get(dim.scale.type)


def levels(dim: Dimension) -> list[float]:
    scale = dim.scale
    return [float(v) for v in range(scale.min, scale.max + 1)] if scale.type == "ordinal" else []


def label_set(dim: Dimension) -> list[Any] | None:
    """The closed label set of a nominal, binary or fixed ranked scale (None otherwise)."""
    scale = dim.scale
    if scale.type == "binary":
        return [False, True]
    if scale.type == "nominal":
        return list(scale.label_ids)
    if scale.type == "ranked" and not participant_labels(dim):
        return list(scale.label_ids())
    return None


def agreement(dim: Dimension, a: Sequence[Any], b: Sequence[Any]) -> float:
    """The dimension's kappa between two raters: on the full scale for ordinal dimensions,
    Cohen's for nominal and binary, Cohen's on the first choice for ranked (NaN if undefined)."""
    kind = dim.scale.type
    if kind == "ordinal":
        return scale_kappa(a, b, levels(dim), "quadratic")
    if kind in ("nominal", "binary"):
        return cohens_kappa(a, b)
    if kind == "ranked" and not participant_labels(dim):
        return cohens_kappa([top1(x) for x in a], [top1(x) for x in b])
    return math.nan


def observed_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Quadratic kappa over the observed categories, as Kumar et al. computed it."""
    return weighted_kappa(a, b, "quadratic")


def fleiss(dim: Dimension, columns: list[list[Any]]) -> float | None:
    """Fleiss' kappa of several raters (one column each, aligned by item) on a nominal or
    binary dimension, or on the first choice of a ranked one; None for ordinal scales (their
    multi-rater figure is Krippendorff's ordinal alpha) or when undefined."""
    kind = dim.scale.type
    if kind not in ("nominal", "binary", "ranked") or len(columns) < 2:
        return None
    if kind == "ranked":
        columns = [[top1(v) for v in column] for column in columns]
    try:
        return finite(fleiss_kappa([list(row) for row in zip(*columns, strict=True)]))
    except ValueError:
        return None


def alpha(dim: Dimension, rows: list[list[Any]]) -> float | None:
    kind = dim.scale.type
    try:
        if kind == "ordinal":
            return finite(krippendorff_alpha(rows, "ordinal"))
        if kind in ("nominal", "binary"):
            return finite(krippendorff_alpha(rows, "nominal"))
        if kind == "ranked":
            return finite(krippendorff_alpha([[top1(v) for v in r] for r in rows], "nominal"))
    except ValueError:
        return None
    return None


def ac1(dim: Dimension, a: Sequence[Any], b: Sequence[Any]) -> float | None:
    cats = label_set(dim)
    if cats is None:
        return None
    xa = [top1(v) for v in a] if dim.scale.type == "ranked" else list(a)
    xb = [top1(v) for v in b] if dim.scale.type == "ranked" else list(b)
    try:
        return finite(gwet_ac1(xa, xb, categories=cats))
    except ValueError:  # a label outside the scale (a ranked first choice of a removed label)
        return finite(gwet_ac1(xa, xb))


def normalised(dim: Dimension, value: Any) -> float | None:
    """A rating on 0..1 (ordinal rescaled, binary as 0/1); None for other scales."""
    scale = dim.scale
    if value is None:
        return None
    if scale.type == "ordinal":
        return (float(value) - scale.min) / (scale.max - scale.min)
    if scale.type == "binary":
        return 1.0 if value else 0.0
    return None


def mean_bias(dim: Dimension, rater: Sequence[Any], reference: Sequence[Any]) -> float | None:
    """Mean of (rater - reference) on the normalised scale over items both rated."""
    diffs = [
        x - y
        for x, y in (
            (normalised(dim, r), normalised(dim, e)) for r, e in zip(rater, reference, strict=True)
        )
        if x is not None and y is not None
    ]
    return finite(sum(diffs) / len(diffs)) if diffs else None


def _sort_key(value: Any) -> tuple[int, Any]:
    return (0, value) if isinstance(value, int | float) else (1, str(value))


def confusion(dim: Dimension, gold: Sequence[Any], pred: Sequence[Any]) -> ConfusionMatrix:
    """Rows: the experts' consensus; columns: the rater (first choice for ranked scales);
    ``abstained`` counts, per consensus label, the items the rater left unanswered."""
    g = [top1(v) for v in gold]
    p = [top1(v) for v in pred]
    seen = {v for v in (*g, *p) if v is not None}
    if dim.scale.type == "ordinal":
        labels: list[Any] = list(scale_grid(levels(dim), sorted(seen)))
        labels = [int(v) if float(v).is_integer() else v for v in labels]
    else:
        labels = list(label_set(dim) or [])
        labels += sorted(seen - set(labels), key=_sort_key)
    index = {v: i for i, v in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    abstained = [0] * len(labels)
    for x, y in zip(g, p, strict=True):
        if x is None:
            continue
        if y is None:
            abstained[index[x]] += 1
        else:
            matrix[index[x]][index[y]] += 1
    return ConfusionMatrix(labels=labels, matrix=matrix, abstained=abstained)


@dataclass(frozen=True)
class Paired:
    """A rater's predictions on the items with a consensus label (None = abstained)."""

    pred: list[Any]
    gold: list[Any]
    groups: list[Hashable | None]
    #: ranked scales: the labels the item offered, in its order (for the chance of Recall@1)
    candidates: list[tuple[str, ...]]

    @property
    def answered(self) -> list[int]:
        return [i for i, p in enumerate(self.pred) if p is not None]


def _rate(
    hits: Sequence[float],
    weights: Sequence[float],
    groups: Sequence[Hashable | None],
    resamples: int,
) -> tuple[float | None, list[float | None]]:
    total = sum(weights)
    if not total:
        return None, [None, None]
    if resampling_units(groups) < MIN_RESAMPLING_UNITS:
        return finite(sum(hits) / total), [None, None]
    interval = bootstrap_ratio_ci(
        hits, weights, groups=groups, n_resamples=resamples, seed=RESAMPLE_SEED
    )
    return finite(sum(hits) / total), ci(interval)


def _both(
    name: str,
    per_item: Sequence[float | None],
    data: Paired,
    resamples: int,
    denominator: Sequence[float] | None = None,
) -> dict[str, Any]:
    """``name`` over answered items and ``name``_abstain_as_miss over all labelled items, each
    with a bootstrap CI (the fields of :class:`RaterStats` so named). ``per_item`` is None
    for an abstention."""
    den = list(denominator) if denominator is not None else [1.0] * len(per_item)
    ans = [i for i, v in enumerate(per_item) if v is not None]
    value, interval = _rate(
        [per_item[i] or 0.0 for i in ans],
        [den[i] for i in ans],
        [data.groups[i] for i in ans],
        resamples,
    )
    miss, miss_interval = _rate([v or 0.0 for v in per_item], den, data.groups, resamples)
    return {
        name: value,
        f"{name}_ci95": interval,
        f"{name}_abstain_as_miss": miss,
        f"{name}_abstain_as_miss_ci95": miss_interval,
    }


def _f1_terms(data: Paired) -> tuple[list[float | None], list[float]]:
    """Per item 2*TP and (2*TP + FP + FN), so that F1 = sum(num) / sum(den); an abstention
    is no positive prediction (a false negative when the consensus is positive) in the
    abstain-as-miss variant and is left out otherwise."""
    num: list[float | None] = []
    den: list[float] = []
    for p, g in zip(data.pred, data.gold, strict=True):
        tp = 1.0 if p is True and g is True else 0.0
        fp = 1.0 if p is True and g is not True else 0.0
        fn = 1.0 if p is not True and g is True else 0.0
        num.append(None if p is None else 2 * tp)
        den.append(2 * tp + fp + fn)
    return num, den


def _ranks(data: Paired, k: int) -> list[int | None]:
    out: list[int | None] = []
    for p, g in zip(data.pred, data.gold, strict=True):
        ranked = p if isinstance(p, list) else ([] if p is None else [p])
        g1 = top1(g)
        out.append(ranked.index(g1) + 1 if g1 in ranked[:k] else None)
    return out


def kappa_interval_of(
    dim: Dimension,
    pred: Sequence[Any],
    gold: Sequence[Any],
    groups: Sequence[Hashable | None],
    resamples: int,
) -> KappaInterval | None:
    """The dimension's kappa of ``pred`` against ``gold`` with the gate's cluster-robust
    interval over independent units (``groups``: :mod:`judge.calibration._units`); None for a
    scale without a pooled kappa. ``refused`` is set below ``MIN_UNITS`` units."""
    kind = dim.scale.type
    if kind == "ordinal":
        return kappa_interval(
            pred,
            gold,
            "quadratic",
            levels=levels(dim),
            groups=groups,
            n_resamples=resamples,
            seed=RESAMPLE_SEED,
        )
    if kind in ("nominal", "binary") or (kind == "ranked" and not participant_labels(dim)):
        return kappa_interval(
            [top1(p) for p in pred],
            [top1(g) for g in gold],
            None,
            numeric=False,
            groups=groups,
            n_resamples=resamples,
            seed=RESAMPLE_SEED,
        )
    return None


def rater_stats(
    dim: Dimension, name: str, data: Paired, experts: dict[str, list[Any]], resamples: int
) -> RaterStats:
    """Agreement of one rater (a judge or the panel) with the consensus on one dimension."""
    kind = dim.scale.type
    answered = data.answered
    pred = [data.pred[i] for i in answered]
    gold = [data.gold[i] for i in answered]
    groups = [data.groups[i] for i in answered]
    labelled = len(data.gold)
    # fields only some scales have (absent, not null, on the others)
    extra: dict[str, Any] = {}
    kappa = agreement(dim, pred, gold)
    interval = kappa_interval_of(dim, pred, gold, groups, resamples)
    if kind == "ordinal":
        extra["kappa_observed_categories"] = finite(observed_kappa(pred, gold))
    kci = (math.nan, math.nan) if interval is None else (interval.low, interval.high)

    hit = [
        None if p is None else float(top1(p) == top1(g))
        for p, g in zip(data.pred, data.gold, strict=True)
    ]
    extra |= _both("accuracy", hit, data, resamples)
    if kind == "binary":
        num, den = _f1_terms(data)
        extra |= _both("f1", num, data, resamples, den)
        extra["precision"], extra["recall"] = _precision_recall(pred, gold)
    chance: tuple[float | None, float | None, list[float | None]] | None = None
    if kind == "ranked":
        k = getattr(dim.scale, "k", 3)
        ranks = _ranks(data, k)
        r1 = [None if p is None else float(r == 1) for p, r in zip(data.pred, ranks, strict=True)]
        rr = [
            None if p is None else (1.0 / r if r else 0.0)
            for p, r in zip(data.pred, ranks, strict=True)
        ]
        extra |= _both("recall_at_1", r1, data, resamples)
        extra |= _both("mrr", rr, data, resamples)
        if participant_labels(dim):
            chance = _chance_corrected(dim, data, resamples)
            extra["chance_recall_at_1"] = chance[0]
            extra[CHANCE_R1], extra[f"{CHANCE_R1}_ci95"] = chance[1], chance[2]
    kappa_ci = ci(kci)
    return RaterStats(
        rater=name,
        n=len(answered),
        abstained=labelled - len(answered),
        coverage=finite(len(answered) / labelled) if labelled else None,
        resampling_units=resampling_units(data.groups),
        kappa=finite(kappa),
        kappa_ci95=(kappa_ci[0], kappa_ci[1]),
        kappa_low_mc=mc_interval(interval.low_mc if interval else None),
        ac1=ac1(dim, pred, gold),
        ac2=finite(gwet_ac2(pred, gold, levels(dim))) if kind == "ordinal" and pred else None,
        alpha=alpha(dim, [pred, gold]),
        mean_normalised=_mean_normalised(dim, pred),
        bias_vs_experts={e: mean_bias(dim, data.pred, col) for e, col in experts.items()},
        agreement=chance[1] if chance else finite(kappa),
        ci95=(chance[2][0], chance[2][1]) if chance else (kappa_ci[0], kappa_ci[1]),
        confusion=confusion(dim, data.gold, data.pred),
        **extra,
    )


def _chance_corrected(
    dim: Dimension, data: Paired, resamples: int
) -> tuple[float | None, float | None, list[float | None]]:
    """Recall@1 corrected for the chance of the rater's own habit of first choices (its
    first choices pooled over items, by position among the item's clients, the group label by
    itself: :func:`judge.reliability.marginal_chance_recall_at_1`), over answered items: a
    constant ranking ("always the first-listed client") scores 0. Returns the mean chance,
    the corrected Recall@1 and its interval (none below ``MIN_RESAMPLING_UNITS`` units)."""
    answered = data.answered
    if not answered:
        return None, None, [None, None]
    group_label = getattr(dim.scale, "group_label", None)
    found = marginal_chance_recall_at_1(
        [top1(data.pred[i]) for i in answered],
        [top1(data.gold[i]) for i in answered],
        [data.candidates[i] for i in answered],
        shared=[group_label] if group_label else [],
        groups=[data.groups[i] for i in answered],
        n_resamples=resamples,
        seed=RESAMPLE_SEED,
    )
    enough = found.units >= MIN_RESAMPLING_UNITS
    interval: list[float | None] = ci((found.low, found.high)) if enough else [None, None]
    return finite(found.chance), finite(found.value), interval


def _precision_recall(pred: list[Any], gold: list[Any]) -> tuple[float | None, float | None]:
    tp = sum(1 for p, g in zip(pred, gold, strict=True) if p is True and g is True)
    fp = sum(1 for p, g in zip(pred, gold, strict=True) if p is True and g is not True)
    fn = sum(1 for p, g in zip(pred, gold, strict=True) if p is not True and g is True)
    precision = tp / (tp + fp) if tp + fp else (0.0 if pred else None)
    recall = tp / (tp + fn) if tp + fn else (0.0 if pred else None)
    return finite(precision), finite(recall)


def _mean_normalised(dim: Dimension, values: list[Any]) -> float | None:
    """Mean rating rescaled to 0..1 (ordinal) or the share of true (binary): drift's yardstick."""
    scaled = [x for x in (normalised(dim, v) for v in values) if x is not None]
    return finite(sum(scaled) / len(scaled)) if scaled else None


def prevalence(dim: Dimension, gold: list[Any]) -> Prevalence | None:
    """The most frequent consensus label (first choice for ranked scales) and its share."""
    firsts = [top1(g) for g in gold if g is not None]
    if not firsts:
        return None
    order = label_set(dim) or []
    counts = Counter(firsts)
    best = max(counts.values())
    tied = [v for v in counts if counts[v] == best]
    label = min(tied, key=lambda v: (order.index(v) if v in order else len(order), str(v)))
    return Prevalence(label=label, share=finite(best / len(firsts)), n=len(firsts))


def majority_baseline(dim: Dimension, gold: list[Any]) -> MajorityBaseline | None:
    """What always answering the most frequent consensus label scores (ranked: the k most
    frequent labels, best first)."""
    firsts = [top1(g) for g in gold if g is not None]
    if not firsts:
        return None
    ranking = [v for v, _ in Counter(firsts).most_common()]
    top = prevalence(dim, gold)
    assert top is not None
    out = MajorityBaseline(label=top.label, accuracy=top.share)
    if dim.scale.type == "binary":
        out.f1 = always_f1(firsts, top.label)
    if dim.scale.type == "ranked":
        k = getattr(dim.scale, "k", 3)
        ranked = ranking[:k]
        out.ranking = ranked
        out.recall_at_1 = finite(sum(1 for g in firsts if g == ranked[0]) / len(firsts))
        out.mrr = finite(
            sum(1 / (ranked.index(g) + 1) for g in firsts if g in ranked) / len(firsts)
        )
    return out


def always_f1(gold: Sequence[Any], answer: Any) -> float | None:
    """F1 of the positive class (true) when every prediction is ``answer``."""
    positives = sum(1 for g in gold if g is True)
    if answer is not True or not positives:
        return 0.0 if gold else None
    precision = positives / len(gold)
    return finite(2 * precision / (precision + 1))
