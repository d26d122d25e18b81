"""Classification and ranking metrics: accuracy, macro-F1, binary P/R/F1, Recall@1, MRR."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

from judge.reliability._missing import check_same_length, is_missing, label

Missing = Literal["drop", "miss"]


class _NoPrediction:
    """Stands in for a missing prediction under ``missing="miss"``: equal to no label."""

    def __repr__(self) -> str:
        return "<no prediction>"


_NO_PREDICTION = _NoPrediction()


@dataclass(frozen=True, slots=True)
class PRF:
    """Precision, recall and F1 of the positive class, and the number of items scored."""

    precision: float
    recall: float
    f1: float
    n: int


def _pairs(
    y_true: Sequence[Hashable], y_pred: Sequence[Hashable], missing: Missing
) -> list[tuple[Hashable, Hashable]]:
    if missing not in ("drop", "miss"):
        raise ValueError(f"missing must be 'drop' or 'miss', got {missing!r}")
    check_same_length(y_true, y_pred)
    pairs: list[tuple[Hashable, Hashable]] = []
    for t, p in zip(y_true, y_pred, strict=True):
        if is_missing(t):
            continue
        if is_missing(p):
            if missing == "drop":
                continue
            pairs.append((label(t), _NO_PREDICTION))
        else:
            pairs.append((label(t), label(p)))
    return pairs


def _div(num: float, den: float) -> float:
    return num / den if den else 0.0


def accuracy(
    y_true: Sequence[Hashable], y_pred: Sequence[Hashable], *, missing: Missing = "drop"
) -> float:
    """Share of items where the prediction equals the gold label.

    Items without a gold label are skipped. A missing prediction is skipped with
    ``missing="drop"`` (the default: agreement over items both sides rated) or counted as
    wrong with ``missing="miss"``. NaN when no item is left.
    """
    pairs = _pairs(y_true, y_pred, missing)
    if not pairs:
        return math.nan
    return sum(t == p for t, p in pairs) / len(pairs)


def _prf(pairs: Sequence[tuple[Hashable, Hashable]], positive: Hashable) -> PRF:
    tp = sum(t == positive and p == positive for t, p in pairs)
    fp = sum(t != positive and p == positive for t, p in pairs)
    fn = sum(t == positive and p != positive for t, p in pairs)
    precision, recall = _div(tp, tp + fp), _div(tp, tp + fn)
    return PRF(precision, recall, _div(2 * precision * recall, precision + recall), len(pairs))


def binary_prf(
    y_true: Sequence[Hashable],
    y_pred: Sequence[Hashable],
    positive: Hashable = True,
    *,
    missing: Missing = "drop",
) -> PRF:
    """Precision, recall and F1 of the ``positive`` label (e.g. RESCUE-BENCH ITP, "yes").

    Zero denominators give 0.0 (as RESCUE-BENCH's ``safe_div`` and scikit-learn's default):
    no positive prediction -> precision 0, no positive gold -> recall 0. Missing values as
    in :func:`accuracy`; with ``missing="miss"`` a missing prediction is not positive (a
    false negative when the gold label is positive). All NaN (n = 0) when no item is left.
    """
    pairs = _pairs(y_true, y_pred, missing)
    if not pairs:
        return PRF(math.nan, math.nan, math.nan, 0)
    return _prf(pairs, label(positive))


def _ranked(prediction: object) -> list[Hashable]:
    if is_missing(prediction):
        return []
    if isinstance(prediction, str | bytes):
        return [prediction]
    if not isinstance(prediction, Sequence):
        raise ValueError(f"a ranked prediction must be a list of labels, got {prediction!r}")
    return [label(v) for v in prediction if not is_missing(v)]


def _ranks(gold: Sequence[Hashable], ranked_predictions: Sequence[object]) -> list[int | None]:
    check_same_length(gold, ranked_predictions)
    ranks: list[int | None] = []
    for g, pred in zip(gold, ranked_predictions, strict=True):
        if is_missing(g):
            continue
        labels = _ranked(pred)
        gl = label(g)
        ranks.append(labels.index(gl) + 1 if gl in labels else None)
    return ranks


def recall_at_1(gold: Sequence[Hashable], ranked_predictions: Sequence[object]) -> float:
    """Share of items whose best-ranked prediction is the gold label.

    ``ranked_predictions[i]`` is a best-first list of labels (a bare string counts as a
    one-element list). A missing or empty prediction counts as a miss; items without a
    gold label are skipped. NaN when no item is left.
    """
    ranks = _ranks(gold, ranked_predictions)
    if not ranks:
        return math.nan
    return sum(r == 1 for r in ranks) / len(ranks)


def mrr(gold: Sequence[Hashable], ranked_predictions: Sequence[object], k: int = 3) -> float:
    """Mean reciprocal rank of the gold label within the top ``k`` predictions.

    RESCUE-BENCH definition: 1/rank of the first occurrence of the gold label among the
    first ``k`` predictions, 0 when it is absent; a missing prediction is a miss (0). Items
    without a gold label are skipped. NaN when no item is left. ValueError when ``k < 1``.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    ranks = _ranks(gold, ranked_predictions)
    if not ranks:
        return math.nan
    return sum(1.0 / r for r in ranks if r is not None and r <= k) / len(ranks)
