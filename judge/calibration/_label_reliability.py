"""Per-label reliability of a nominal or ranked dimension (pure): each label's recall and
precision of the panel's first choice against the experts' consensus, with percentile
bootstrap CIs that resample independent units (sessions), and the level a prediction of that
label can reach (issue 31; README, "Per-label reliability").

Rules, with ``floor``/``line`` the rubric's policy and :data:`MIN_LABEL_ITEMS`:

- untrusted: the experts never gave the label in the calibration (``label_never_observed``),
  or its recall or precision is below the floor (``label_below_floor``);
- caution: the experts gave it fewer than :data:`MIN_LABEL_ITEMS` times
  (``label_rarely_observed``), its recall or precision is below the line
  (``label_below_line``), or a CI's lower bound is below the floor (``label_uncertain``).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from empathy_judge_client.label_reliability import LabelReliability
from judge.calibration._rater_stats import (
    MIN_RESAMPLING_UNITS,
    RESAMPLE_SEED,
    ci,
    finite,
    label_set,
    participant_labels,
    resampling_units,
    top1,
)
from judge.domain.rubric import Dimension, ReliabilityPolicy
from judge.reliability import bootstrap_ratio_ci

__all__ = ["MIN_LABEL_ITEMS", "label_reliability", "label_reliability_applies"]

#: a label the experts gave fewer times than this is "rarely observed"
MIN_LABEL_ITEMS = 10


def label_reliability_applies(dim: Dimension) -> bool:
    """Nominal and ranked scales of fixed labels (not a session's participants)."""
    return dim.scale.type in ("nominal", "ranked") and not participant_labels(dim)


def _ratio(
    hits: list[float], groups: list[Hashable | None], resamples: int
) -> tuple[float | None, list[float | None] | None]:
    if not hits:
        return None, None
    value = finite(sum(hits) / len(hits))
    if resampling_units(groups) < MIN_RESAMPLING_UNITS:
        return value, [None, None]
    interval = bootstrap_ratio_ci(
        hits, [1.0] * len(hits), groups=groups, n_resamples=resamples, seed=RESAMPLE_SEED
    )
    return value, ci(interval)


def _level(
    gold_n: int,
    rates: Sequence[tuple[float | None, list[float | None] | None]],
    policy: ReliabilityPolicy,
) -> tuple[str, tuple[str, ...]]:
    untrusted: list[str] = []
    caution: list[str] = []
    if gold_n == 0:
        untrusted.append("label_never_observed")
    elif gold_n < MIN_LABEL_ITEMS:
        caution.append("label_rarely_observed")
    points = [v for v, _ in rates if v is not None]
    if any(v < policy.floor for v in points):
        untrusted.append("label_below_floor")
    elif any(v < policy.line for v in points):
        caution.append("label_below_line")
    lows = [iv[0] for _, iv in rates if iv is not None]
    if any(low is None or low < policy.floor for low in lows) and gold_n:
        caution.append("label_uncertain")
    level = "untrusted" if untrusted else "caution" if caution else "trusted"
    return level, tuple(untrusted + caution)


def label_reliability(
    dim: Dimension,
    pred: Sequence[Any],
    gold: Sequence[Any],
    groups: Sequence[Hashable | None],
    policy: ReliabilityPolicy,
    resamples: int,
) -> tuple[LabelReliability, ...]:
    """Every label of the scale (and any other seen) over the items both the panel and the
    experts' consensus answered."""
    pairs = [
        (top1(p), top1(g), grp)
        for p, g, grp in zip(pred, gold, groups, strict=True)
        if p is not None and g is not None
    ]
    labels = [str(v) for v in label_set(dim) or []]
    labels += sorted({str(v) for p, g, _ in pairs for v in (p, g)} - set(labels))
    out = []
    for label in labels:
        as_gold = [(float(str(p) == label), grp) for p, g, grp in pairs if str(g) == label]
        as_pred = [(float(str(g) == label), grp) for p, g, grp in pairs if str(p) == label]
        recall = _ratio([h for h, _ in as_gold], [grp for _, grp in as_gold], resamples)
        precision = _ratio([h for h, _ in as_pred], [grp for _, grp in as_pred], resamples)
        level, reasons = _level(len(as_gold), [recall, precision], policy)
        out.append(
            LabelReliability(
                label=label,
                gold_n=len(as_gold),
                pred_n=len(as_pred),
                units=resampling_units([grp for _, grp in as_gold]) if as_gold else 0,
                recall=recall[0],
                recall_ci95=None if recall[1] is None else (recall[1][0], recall[1][1]),
                precision=precision[0],
                precision_ci95=None if precision[1] is None else (precision[1][0], precision[1][1]),
                level=level,
                reasons=reasons,
            )
        )
    return tuple(out)
