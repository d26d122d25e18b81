"""Item-level guarantees of one scored dimension (judge.domain.guarantees): the panel's
confidence, the conformal interval or prediction set, and whether the dimension is guaranteed.

The calibration run (:mod:`judge.calibration._guarantees`) computes its thresholds with the
same functions, so a result's confidence is the one its calibration tested. Both use every
judge that rated (a judge excluded from the aggregate for self-preference included) and the
panel's *equal* aggregate (median, majority, first choice), which is what calibration runs
measure: under weighted aggregation the interval is around ``aggregation.equal_score``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from judge.domain.flags import Calibration
from judge.domain.guarantees import (
    DimensionGuarantee,
    GuaranteePolicy,
    ItemGuarantee,
    NotGuaranteedReason,
    PredictionSet,
    ScoreInterval,
)
from judge.domain.rubric import Dimension, ReliabilityPolicy
from judge.panel.aggregate import label_order
from judge.reliability import label_features, ordinal_features, ordinal_intervals

FloatArray = npt.NDArray[np.float64]
_EPS = 1e-9

CONFIDENCE_METHOD = (
    "ordinal: mean of range agreement (1 - spread / scale span) and modal agreement of the "
    "judges' ratings, judges within agree_within levels counted as agreeing; labels: modal "
    "agreement of the judges' votes (ranked: first choices); judges sampled k > 1 times add "
    "their self-consistency across samples"
)


def _first(value: Any) -> Any:
    return (value[0] if value else None) if isinstance(value, list) else value


def _number(value: Any) -> float:
    return math.nan if value is None else float(value)


#: per item, per judge (as in its row of ratings): the judge's k samples, or None
Samples = Sequence[Sequence[Sequence[Any] | None]]


def _sample_cube(samples: Samples, judges: int) -> FloatArray | None:
    """(items, judges, k) with NaN where a judge has fewer samples (None: no judge has any)."""
    k = max((len(s) for row in samples for s in row if s), default=0)
    if k < 2:
        return None
    cube = np.full((len(samples), judges, k), np.nan)
    for i, row in enumerate(samples):
        for j, values in enumerate(row):
            for n, value in enumerate(values or ()):
                cube[i, j, n] = _number(value)
    return cube


def panel_confidence(
    dim: Dimension,
    ratings: Sequence[Sequence[Any]],
    agree_within: int,
    samples: Samples | None = None,
) -> FloatArray:
    """Per item (a row of judges' ratings, None for an abstention): the panel's confidence
    in [0, 1], NaN with fewer than two ratings; with ``samples`` (panel option ``samples``)
    each judge's self-consistency across its samples counts as a further feature."""
    scale = dim.scale
    if scale.type == "ordinal":
        grid = np.asarray([[_number(v) for v in row] for row in ratings], dtype=np.float64).reshape(
            len(ratings), -1
        )
        cube = _sample_cube(samples, grid.shape[1]) if samples is not None else None
        return ordinal_features(
            grid,
            scale.min,
            scale.max,
            samples=cube,
            tolerance=min(agree_within, scale.max - scale.min - 1),
        ).confidence()
    per_judge = (
        [[[_first(v) for v in s or ()] for s in row] for row in samples]
        if samples is not None and any(s and len(s) > 1 for row in samples for s in row)
        else None
    )
    votes = [[_first(v) for v in row] for row in ratings]
    return label_features(votes, samples=per_judge).confidence()


def label_nonconformity(votes: Sequence[Any], label: Any) -> float:
    """``1 - the label's share of the valid votes`` (ranked: first choices); 1 without votes."""
    valid = [_first(v) for v in votes if v is not None]
    if not valid:
        return 1.0
    return 1.0 - sum(1 for v in valid if v == label) / len(valid)


def _interval(
    dim: Dimension, score: Any, stored: DimensionGuarantee, calibration: Calibration
) -> ScoreInterval:
    q = stored.conformal.quantile
    levels = list(range(dim.scale.min, dim.scale.max + 1))  # type: ignore[union-attr]
    low, high = ordinal_intervals([_number(score)], math.inf if q is None else q, levels)
    return ScoreInterval(
        level=stored.conformal.level,
        low=None if math.isnan(low[0]) else float(low[0]),
        high=None if math.isnan(high[0]) else float(high[0]),
        calibration_id=calibration.run_id,
        simulated=calibration.simulated,
    )


def _prediction_set(
    dim: Dimension,
    votes: Sequence[Any],
    stored: DimensionGuarantee,
    calibration: Calibration,
    participants: tuple[str, ...],
) -> PredictionSet:
    q = math.inf if stored.conformal.quantile is None else stored.conformal.quantile
    labels = [
        label
        for label in label_order(dim, participants)
        if label_nonconformity(votes, label) <= q + _EPS
    ]
    return PredictionSet(
        level=stored.conformal.level,
        labels=labels,
        calibration_id=calibration.run_id,
        simulated=calibration.simulated,
    )


def _decide(
    wanted: GuaranteePolicy,
    stored: DimensionGuarantee,
    calibration: Calibration,
    policy: ReliabilityPolicy,
    confidence: float,
    scored: bool,
) -> tuple[bool, NotGuaranteedReason | None]:
    selective = stored.selective
    if stored.policy != wanted:
        return False, "policy_changed"
    if not scored:
        return False, "no_score"
    if selective.status != "guaranteed" or selective.threshold is None:
        return False, "no_guarantee_available"
    if not calibration.passes_evidence_gate(policy):
        return False, "evidence_gate"
    if math.isnan(confidence) or confidence < selective.threshold - _EPS:
        return False, "below_confidence_threshold"
    return True, None


def item_guarantee(
    dim: Dimension,
    votes: Sequence[Any],
    equal_score: Any,
    calibration: Calibration | None,
    policy: ReliabilityPolicy,
    participants: tuple[str, ...] = (),
    samples: Sequence[Sequence[Any] | None] | None = None,
) -> tuple[ScoreInterval | None, PredictionSet | None, ItemGuarantee | None]:
    """The interval (ordinal) or prediction set (labels) and the guarantee of one scored
    dimension: ``votes`` are the ratings of every judge that rated (``samples``: each one's
    k samples, or None), ``equal_score`` the panel's equal aggregate (None below quorum).
    Nothing without a guarantee policy."""
    wanted = policy.guarantee
    if wanted is None or dim.scale.type == "free_text":
        return None, None, None
    restated = {
        "agreement": wanted.agreement,
        "probability": wanted.confidence,
        "agree_within": wanted.agree_within,
    }
    stored = calibration.guarantee if calibration is not None else None
    if calibration is None or stored is None:
        return (
            None,
            None,
            ItemGuarantee(
                guaranteed=False, reason="not_calibrated", status="not_calibrated", **restated
            ),
        )
    scored = equal_score is not None
    interval = (
        _interval(dim, equal_score, stored, calibration)
        if scored and (dim.scale.type == "ordinal")
        else None
    )
    labels = (
        _prediction_set(dim, votes, stored, calibration, participants)
        if scored and dim.scale.type != "ordinal"
        else None
    )
    rows = None if samples is None else [list(samples)]
    confidence = float(panel_confidence(dim, [list(votes)], wanted.agree_within, rows)[0])
    guaranteed, reason = _decide(wanted, stored, calibration, policy, confidence, scored)
    return (
        interval,
        labels,
        ItemGuarantee(
            guaranteed=guaranteed,
            reason=reason,
            status=stored.selective.status,
            confidence=None if math.isnan(confidence) else round(confidence, 6),
            threshold=stored.selective.threshold,
            calibration_id=calibration.run_id,
            simulated=calibration.simulated,
            **restated,
        ),
    )
