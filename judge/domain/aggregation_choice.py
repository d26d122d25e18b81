"""Which aggregation a panel uses on a dimension: equal or reliability-weighted.

A panel's ``aggregation`` setting:

- ``equal``: every valid judge counts the same (median, majority, Borda);
- ``weighted``: each judge counts with its weight on the dimension, from the applicable
  calibration, wherever that calibration measured every judge of the panel there;
- ``auto`` (the default): equal, until the applicable calibration of the dimension passes the
  evidence gate *and* its cross-validated comparison showed the weighted aggregate agreeing
  with the experts better than the equal one (the lower bound of the paired bootstrap CI of
  the difference above zero). Where weighting was not shown to help, auto stays equal.

Weights are ``max(agreement, 0)``: each judge's own chance-corrected agreement with the
experts on the dimension (quadratic kappa, Cohen's kappa or chance-corrected Recall@1, as the
flag's metric), so a judge no better than chance has no say, and a judge's say grows with how
far above chance it agrees. A dimension whose judges all sit at or below chance has no
weights (equal aggregation applies).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from judge.domain.flags import Calibration
from judge.domain.rubric import ReliabilityPolicy

AggregationMode = Literal["auto", "equal", "weighted"]
WEIGHT_METHOD = "max(agreement, 0)"


@dataclass(frozen=True)
class AggregationChoice:
    """What a dimension's aggregate uses: ``weights`` (model -> weight) when weighted, and
    why (``reason``) otherwise; ``run_id`` is the calibration the decision came from."""

    method: Literal["equal", "weighted"]
    reason: str
    weights: Mapping[str, float] | None = None
    run_id: str | None = None


def reliability_weights(
    agreements: Mapping[str, float | None], judges: Sequence[str]
) -> dict[str, float] | None:
    """``max(agreement, 0)`` per judge; None when a judge has no finite agreement or every
    weight is zero (weights cannot then tell judges apart)."""
    weights: dict[str, float] = {}
    for judge in judges:
        value = agreements.get(judge)
        if value is None or not math.isfinite(value):
            return None
        weights[judge] = round(max(float(value), 0.0), 4)
    return weights if any(w > 0 for w in weights.values()) else None


def choose_aggregation(
    mode: AggregationMode,
    calibration: Calibration | None,
    judges: Sequence[str],
    policy: ReliabilityPolicy,
) -> AggregationChoice:
    """The aggregation of one dimension for a panel of ``judges`` (model strings)."""
    if mode == "equal":
        return AggregationChoice("equal", "configured_equal")
    if calibration is None:
        return AggregationChoice("equal", "uncalibrated")
    run = calibration.run_id
    weights = reliability_weights(calibration.judge_agreement, judges)
    if weights is None:
        return AggregationChoice("equal", "no_weights", run_id=run)
    if mode == "weighted":
        return AggregationChoice("weighted", "configured_weighted", weights, run)
    if not calibration.passes_evidence_gate(policy):
        return AggregationChoice("equal", "evidence_gate_not_passed", run_id=run)
    if calibration.weighting_helps is None:
        return AggregationChoice("equal", "weighting_not_evaluated", run_id=run)
    if not calibration.weighting_helps:
        return AggregationChoice("equal", "weighting_not_shown_to_help", run_id=run)
    return AggregationChoice("weighted", "calibrated_gain", weights, run)
