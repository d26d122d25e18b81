"""The calibration report: how well each judge, and the panel's aggregate, agree with experts.

Pure computation over plain data (no I/O). Per dimension:

- expert consensus per item: the median of the experts (ordinal, as Kumar et al.), else the
  majority label (nominal, binary; ties go to the earlier label of the scale) or the majority
  first choice (ranked);
- the expert-expert baseline when two or more experts labelled: every pair's agreement and
  their median (what the flags call ``expert_kappa``), plus Krippendorff's alpha;
- each judge's and the aggregate's agreement with the consensus, with a bootstrap 95% CI:
  quadratic-weighted kappa (ordinal), Cohen's kappa (nominal, binary, and the first choice of
  ranked scales), plus accuracy, F1 (binary), Recall@1 and MRR (ranked). Abstentions are left
  out pairwise, never imputed, and counted.
- the reliability flag that results (the aggregate's kappa is the panel's ``judge_kappa``).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from judge.domain.flags import Calibration, reliability_flag
from judge.domain.rubric import Dimension, Rubric
from judge.reliability import (
    accuracy,
    binary_prf,
    bootstrap_kappa_ci,
    cohens_kappa,
    krippendorff_alpha,
    mrr,
    recall_at_1,
    weighted_kappa,
)

PANEL = "panel"


@dataclass(frozen=True)
class ScoredItem:
    """One calibration item: expert labels and what each judge (and the panel) said."""

    labels: dict[str, dict[str, Any]]  # expert -> dimension -> value
    judges: dict[str, dict[str, Any]]  # model -> dimension -> rating (missing = abstained)
    aggregate: dict[str, Any]  # dimension -> panel score (None when below quorum)


def _finite(x: float | None) -> float | None:
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else round(x, 4)


def metric_name(dim: Dimension) -> str | None:
    return {
        "ordinal": "quadratic_weighted_kappa",
        "nominal": "cohens_kappa",
        "binary": "cohens_kappa",
        "ranked": "cohens_kappa_top1",
    }.get(dim.scale.type)


def _top1(value: Any) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


def _majority(values: list[Any], order: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return None
    counts = Counter(present)
    best = max(counts.values())
    tied = [v for v in counts if counts[v] == best]
    position = {v: i for i, v in enumerate(order)}
    return min(tied, key=lambda v: position.get(v, len(order)))


def consensus(dim: Dimension, values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if not present:
        return None
    kind = dim.scale.type
    if kind == "ordinal":
        median = statistics.median(present)
        return int(median) if float(median).is_integer() else float(median)
    if kind == "binary":
        return _majority(present, [False, True])
    if kind == "nominal":
        return _majority(present, list(getattr(dim.scale, "label_ids", ())))
    if kind == "ranked":
        return _majority([_top1(v) for v in present], [])
    return None


def agreement(dim: Dimension, a: Sequence[Any], b: Sequence[Any]) -> float:
    """The dimension's agreement statistic between two raters (NaN when undefined)."""
    kind = dim.scale.type
    if kind == "ordinal":
        return weighted_kappa(a, b, "quadratic")
    if kind in ("nominal", "binary"):
        return cohens_kappa(a, b)
    if kind == "ranked":
        return cohens_kappa([_top1(x) for x in a], [_top1(x) for x in b])
    return math.nan


def _alpha(dim: Dimension, rows: list[list[Any]]) -> float | None:
    kind = dim.scale.type
    try:
        if kind == "ordinal":
            return _finite(krippendorff_alpha(rows, "ordinal"))
        if kind in ("nominal", "binary"):
            return _finite(krippendorff_alpha(rows, "nominal"))
        if kind == "ranked":
            return _finite(krippendorff_alpha([[_top1(v) for v in r] for r in rows], "nominal"))
    except ValueError:
        return None
    return None


def _kappa_ci(
    dim: Dimension, pred: list[Any], ref: list[Any], resamples: int
) -> tuple[float, float]:
    kind = dim.scale.type
    if kind == "ordinal":
        return bootstrap_kappa_ci(pred, ref, "quadratic", n_resamples=resamples, seed=17)
    if kind == "ranked":
        pred, ref = [_top1(p) for p in pred], [_top1(r) for r in ref]
    return bootstrap_kappa_ci(pred, ref, None, numeric=False, n_resamples=resamples, seed=17)


def _mean_normalised(dim: Dimension, values: list[Any]) -> float | None:
    """Mean rating rescaled to 0..1 (ordinal) or the share of true (binary): drift's yardstick."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    scale = dim.scale
    if scale.type == "ordinal":
        span = scale.max - scale.min
        return _finite(sum((float(v) - scale.min) / span for v in present) / len(present))
    if scale.type == "binary":
        return _finite(sum(1.0 for v in present if v) / len(present))
    return None


def _rater_stats(
    dim: Dimension, name: str, predicted: list[Any], gold: list[Any], resamples: int
) -> dict[str, Any]:
    pairs = [(p, g) for p, g in zip(predicted, gold, strict=True) if g is not None]
    pred = [p for p, _ in pairs]
    ref = [g for _, g in pairs]
    kappa = agreement(dim, pred, ref)
    low, high = _kappa_ci(dim, pred, ref, resamples)
    stats: dict[str, Any] = {
        "rater": name,
        "kappa": _finite(kappa),
        "ci95": [_finite(low), _finite(high)],
        "n": sum(1 for p in pred if p is not None),
        "abstained": sum(1 for p in pred if p is None),
        "alpha": _alpha(dim, [pred, ref]),
        "mean_normalised": _mean_normalised(dim, pred),
    }
    kind = dim.scale.type
    if kind in ("nominal", "binary"):
        stats["accuracy"] = _finite(accuracy(ref, pred))
    if kind == "binary":
        prf = binary_prf(ref, pred, positive=True)
        stats |= {"precision": _finite(prf.precision), "recall": _finite(prf.recall)}
        stats["f1"] = _finite(prf.f1)
    if kind == "ranked":
        # Recall@1 and MRR count an empty ranking as a miss; an abstention is no ranking at
        # all, so it is left out here as everywhere else (and counted in ``abstained``).
        k = getattr(dim.scale, "k", 3)
        answered = [(p, g) for p, g in zip(pred, ref, strict=True) if p is not None]
        ranked_pred = [p for p, _ in answered]
        ranked_ref = [g for _, g in answered]
        stats["accuracy"] = _finite(accuracy(ranked_ref, [_top1(p) for p in ranked_pred]))
        stats["recall_at_1"] = _finite(recall_at_1(ranked_ref, ranked_pred))
        stats["mrr"] = _finite(mrr(ranked_ref, ranked_pred, k=k))
    return stats


def _expert_baseline(
    dim: Dimension, experts: list[str], items: Sequence[ScoredItem]
) -> dict[str, Any] | None:
    if len(experts) < 2:
        return None
    columns = {e: [it.labels.get(e, {}).get(dim.id) for it in items] for e in experts}
    pairs: list[dict[str, Any]] = []
    for a, b in combinations(experts, 2):
        n = sum(
            1
            for x, y in zip(columns[a], columns[b], strict=True)
            if x is not None and y is not None
        )
        pairs.append(
            {"a": a, "b": b, "kappa": _finite(agreement(dim, columns[a], columns[b])), "n": n}
        )
    finite: list[float] = [p["kappa"] for p in pairs if p["kappa"] is not None]
    return {
        "pairs": pairs,
        "median": _finite(statistics.median(finite)) if finite else None,
        "alpha": _alpha(dim, [columns[e] for e in experts]),
    }


def dimension_report(
    rubric: Rubric,
    dim: Dimension,
    items: Sequence[ScoredItem],
    judges: list[str],
    run_id: str,
    *,
    resamples: int = 500,
) -> dict[str, Any]:
    experts = sorted({e for it in items for e, labels in it.labels.items() if dim.id in labels})
    gold = [consensus(dim, [it.labels.get(e, {}).get(dim.id) for e in experts]) for it in items]
    report: dict[str, Any] = {
        "scale": dim.scale.type,
        "metric": metric_name(dim),
        "items_with_labels": sum(1 for g in gold if g is not None),
        "experts": experts,
    }
    if metric_name(dim) is None or not any(g is not None for g in gold):
        report |= {"expert_expert": None, "raters": [], "flag": None}
        return report
    baseline = _expert_baseline(dim, experts, items)
    raters = [
        _rater_stats(
            dim, model, [it.judges.get(model, {}).get(dim.id) for it in items], gold, resamples
        )
        for model in judges
    ]
    panel = _rater_stats(dim, PANEL, [it.aggregate.get(dim.id) for it in items], gold, resamples)
    raters.append(panel)
    expert_kappa = baseline["median"] if baseline else None
    flag = reliability_flag(
        policy=rubric.reliability,
        prior=dim.prior,
        calibration=Calibration(run_id, judge_kappa=panel["kappa"], expert_kappa=expert_kappa),
        valid_judges=len(judges),
        quorum=1,
        disagreement=False,
    )
    report |= {"expert_expert": baseline, "raters": raters, "flag": flag.model_dump()}
    return report


def calibration_report(
    rubric: Rubric,
    items: Sequence[ScoredItem],
    judges: list[str],
    run_id: str,
    *,
    resamples: int = 500,
) -> dict[str, Any]:
    dims = {
        d.id: dimension_report(rubric, d, items, judges, run_id, resamples=resamples)
        for d in rubric.dimensions
    }
    experts = sorted({e for it in items for e in it.labels})
    return {
        "run_id": run_id,
        "rubric": {"id": rubric.id, "version": rubric.version, "hash": rubric.content_hash},
        "judges": judges,
        "experts": experts,
        "n_items": len(items),
        "threshold": rubric.reliability.line,
        "floor": rubric.reliability.floor,
        "dimensions": dims,
    }


def flag_inputs(report: dict[str, Any]) -> dict[str, dict[str, float | None]]:
    """What reliability flags need from a report: per dimension expert and panel kappa."""
    out: dict[str, dict[str, float | None]] = {}
    for dim_id, dim in report["dimensions"].items():
        if not dim.get("raters"):
            continue
        panel = next(r for r in dim["raters"] if r["rater"] == PANEL)
        baseline = dim.get("expert_expert") or {}
        out[dim_id] = {"judge_kappa": panel["kappa"], "expert_kappa": baseline.get("median")}
    return out
