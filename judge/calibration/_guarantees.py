"""What a calibration run stores for item-level guarantees (judge.domain.guarantees), per
dimension: the conformal threshold (with the Mondrian thresholds per confidence bin beside
it) and the selective confidence threshold chosen by fixed-sequence testing, with the
achieved coverage and the threshold curve. The statistics are in :mod:`judge.reliability`;
the per-item confidence and label scores in :mod:`judge.panel.guarantee`.

Calibration items are those with an expert consensus and a panel answer. The guarantees
assume items exchangeable with the calibration's; when items carry groups, ``units`` counts
the groups and the report says so (a group split between calibration and use breaks it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from judge.calibration._report import labelled_with_consensus
from judge.calibration._scored import ScoredItem
from judge.domain.calibration_report import CalibrationReport
from judge.domain.guarantees import (
    ConformalBin,
    ConformalCalibration,
    DimensionGuarantee,
    GuaranteePolicy,
    SelectiveCalibration,
    ThresholdPoint,
)
from judge.domain.rubric import Dimension, Rubric
from judge.panel.guarantee import (
    CONFIDENCE_METHOD,
    label_nonconformity,
    panel_confidence,
)
from judge.reliability import (
    ConformalQuantile,
    agreement_within,
    conformal_quantile,
    mondrian_quantiles,
    ordinal_intervals,
    ordinal_scores,
    selective_threshold,
)

ORDINAL_SCORE = "|panel median - expert median| (scale levels)"
LABEL_SCORE = "1 - share of the judges' votes for the consensus label (ranked: first choices)"


def _finite(value: float) -> float | None:
    return None if math.isinf(value) or math.isnan(value) else round(value, 6)


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


def _bins(scores: np.ndarray, confidence: np.ndarray, level: float) -> dict[str, ConformalBin]:
    keys = ["unanimous" if c >= 1 - 1e-9 else "split" for c in confidence]
    found = mondrian_quantiles(scores, keys, 1 - level)
    return {
        str(key): ConformalBin(n=q.n, quantile=_finite(q.value), status=q.status)
        for key, q in found.items()
    }


def _conformal(
    q: ConformalQuantile, level: float, nonconformity: str, covered: float, width: float | None
) -> ConformalCalibration:
    return ConformalCalibration(
        level=level,
        n=q.n,
        rank=q.rank,
        quantile=_finite(q.value),
        status=q.status,
        min_units=q.min_units,
        nonconformity=nonconformity,
        coverage=round(covered, 6),
        mean_width=None if width is None else round(width, 6),
    )


def dimension_guarantee(
    dim: Dimension, items: Sequence[ScoredItem], judges: list[str], policy: GuaranteePolicy
) -> DimensionGuarantee | None:
    """The dimension's guarantee calibration (None for free text or without labelled items
    the panel answered)."""
    scale = dim.scale
    if scale.type == "free_text":
        return None
    _, labelled, gold = labelled_with_consensus(dim, items)
    pairs = [
        (it, g)
        for it, g in zip(labelled, gold, strict=True)
        if it.aggregate.get(dim.id) is not None
    ]
    if not pairs:
        return None
    used = [it for it, _ in pairs]
    truth = [g for _, g in pairs]
    votes = [[it.judges.get(m, {}).get(dim.id) for m in judges] for it in used]
    samples = [[it.judge_samples.get(m, {}).get(dim.id) for m in judges] for it in used]
    confidence = panel_confidence(dim, votes, policy.agree_within, samples)
    aggregate = [it.aggregate[dim.id] for it in used]
    if scale.type == "ordinal":
        scores = ordinal_scores([_number(a) for a in aggregate], [_number(g) for g in truth])
        q = conformal_quantile(scores, 1 - policy.level)
        low, high = ordinal_intervals(
            [_number(a) for a in aggregate], q.value, list(range(scale.min, scale.max + 1))
        )
        widths = high - low
        width = float(np.nanmean(widths)) if not np.isnan(widths).all() else None
        agreed = agreement_within(aggregate, truth, policy.agree_within)
        nonconformity = ORDINAL_SCORE
    else:
        first = [g[0] if isinstance(g, list) else g for g in truth]
        scores = np.array([label_nonconformity(v, g) for v, g in zip(votes, first, strict=True)])
        q = conformal_quantile(scores, 1 - policy.level)
        width = None
        answers = [a[0] if isinstance(a, list) and a else a for a in aggregate]
        agreed = np.array([a == g for a, g in zip(answers, first, strict=True)], dtype=np.bool_)
        nonconformity = LABEL_SCORE
    covered = float(np.mean(scores <= q.value + 1e-9))
    conformal = _conformal(q, policy.level, nonconformity, covered, width)
    conformal.bins = _bins(scores, confidence, policy.level)
    chosen = selective_threshold(confidence, agreed, 1 - policy.agreement, 1 - policy.confidence)
    curve = [
        ThresholdPoint(
            threshold=round(s.threshold, 6),
            kept=s.kept,
            errors=s.errors,
            agreement=None if math.isnan(s.agreement) else round(s.agreement, 6),
            coverage=round(s.coverage, 6),
            p_value=round(s.p_value, 6),
            tested=s.tested,
            passed=s.passed,
        )
        for s in chosen.curve
    ]
    groups = {it.group for it in used if it.group is not None}
    return DimensionGuarantee(
        policy=policy,
        scale=scale.type,
        n=len(used),
        units=len(groups) if groups else len(used),
        confidence=CONFIDENCE_METHOD,
        conformal=conformal,
        selective=SelectiveCalibration(
            status=chosen.status,
            threshold=chosen.threshold,
            coverage=round(chosen.coverage, 6),
            agreement=None if math.isnan(chosen.agreement) else round(chosen.agreement, 6),
            n=chosen.n,
            min_units=chosen.min_units,
            curve=curve,
        ),
    )


def add_guarantees(
    report: CalibrationReport,
    rubric: Rubric,
    items: Sequence[ScoredItem],
    judges: list[str],
    policy: GuaranteePolicy | None,
) -> CalibrationReport:
    """``report`` with each dimension's guarantee calibration, in the dimension and in its
    flag inputs (what scoring reads); the default policy when the rubric sets none, so a run
    made before a policy is set still serves the default one."""
    wanted = policy or GuaranteePolicy()
    for dim in rubric.dimensions:
        part = report.dimensions.get(dim.id)
        if part is None:
            continue
        found = dimension_guarantee(dim, items, judges, wanted)
        if found is None:
            continue
        part.guarantee = found
        if part.flag_inputs is not None:
            part.flag_inputs = part.flag_inputs.model_copy(update={"guarantee": found})
    return report
