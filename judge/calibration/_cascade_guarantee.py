"""A cascade panel's stage thresholds, calibrated jointly (issue 27, cascade panels).

A calibration run scores every item with every stage (the full panel), so each stage's
answer and confidence are known on every calibration item: the stage's answer is the equal
aggregate of its judges' ratings (withheld below ``min(quorum, stage size)`` valid ratings,
as in scoring), its confidence :func:`judge.panel.guarantee.panel_confidence` over them. The
thresholds are then chosen together by :func:`judge.reliability.cascade_threshold`, so the
guarantee holds for the cascade as a whole, not stage by stage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from judge.calibration._scored import ScoredItem
from judge.domain.guarantees import CascadeCalibration, GuaranteePolicy
from judge.domain.rubric import Dimension, Tolerance
from judge.panel.aggregate import aggregate
from judge.panel.guarantee import panel_confidence
from judge.reliability import agreement_within, cascade_threshold

Stages = tuple[tuple[str, ...], ...]


def _first(value: Any) -> Any:
    return (value[0] if value else None) if isinstance(value, list) else value


def _agrees(dim: Dimension, answer: Any, truth: Any, within: int) -> bool:
    if answer is None:
        return False
    if dim.scale.type == "ordinal":
        return bool(agreement_within([float(answer)], [float(truth)], within)[0])
    return bool(_first(answer) == _first(truth))


def stage_answers(
    dim: Dimension,
    items: Sequence[ScoredItem],
    truth: Sequence[Any],
    stages: Stages,
    policy: GuaranteePolicy,
    quorum: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(items, stages): each stage's confidence (NaN without an answer) and whether its
    answer agrees with the experts' consensus."""
    conf = np.full((len(items), len(stages)), np.nan)
    agreed = np.zeros((len(items), len(stages)), dtype=np.bool_)
    for s, models in enumerate(stages):
        needed = min(quorum, len(models))
        for i, (item, gold) in enumerate(zip(items, truth, strict=True)):
            votes = [item.judges.get(m, {}).get(dim.id) for m in models]
            valid = [v for v in votes if v is not None]
            if len(valid) < needed or not valid:
                continue
            samples = [item.judge_samples.get(m, {}).get(dim.id) for m in models]
            conf[i, s] = panel_confidence(dim, [votes], policy.agree_within, [samples])[0]
            answer = aggregate(dim, valid, Tolerance(), item.participants).score
            agreed[i, s] = _agrees(dim, answer, gold, policy.agree_within)
    return conf, agreed


def cascade_calibration(
    dim: Dimension,
    items: Sequence[ScoredItem],
    truth: Sequence[Any],
    stages: Stages,
    policy: GuaranteePolicy,
    quorum: int,
) -> CascadeCalibration:
    """The jointly chosen stage thresholds on ``items`` (with their consensus ``truth``)."""
    conf, agreed = stage_answers(dim, items, truth, stages, policy, quorum)
    chosen = cascade_threshold(conf, agreed, 1 - policy.agreement, 1 - policy.confidence)
    return CascadeCalibration(
        status=chosen.status,
        stages=[list(s) for s in stages],
        thresholds=None if chosen.thresholds is None else list(chosen.thresholds),
        coverage=round(chosen.coverage, 6),
        agreement=None if math.isnan(chosen.agreement) else round(chosen.agreement, 6),
        stage_shares=[round(s, 6) for s in chosen.stage_shares],
        n=chosen.n,
        min_units=chosen.min_units,
    )
