"""Agreement with abstentions counted as misses (worst-case imputation).

Kappa over the answered items lets a judge raise its agreement by abstaining exactly where it
would disagree. Here every labelled item counts: an abstention is imputed as the answer that
agrees least with the consensus, so abstaining can never score better than answering.

- Ordinal scales: the end of the scale farther from the consensus (the lowest level when the
  consensus sits exactly midway). For weighted kappa and AC2 this is the largest disagreement
  weight the item can carry.
- Labels (nominal, binary, first choices): a category of its own, ``ABSTAINED``, which no
  consensus ever takes, so the item is a disagreement under any label weighting.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

from judge.reliability._cluster_kappa import Coefficient
from judge.reliability._kappa import Weights
from judge.reliability._kappa_interval import (
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    MIN_UNITS,
    KappaInterval,
    Method,
    kappa_interval,
)
from judge.reliability._missing import as_number, is_missing

#: the imputed label of an abstention on a label scale
ABSTAINED = "<abstained>"


def worst_case_answers(
    pred: Sequence[object], consensus: Sequence[object], levels: Sequence[float] | None = None
) -> list[object]:
    """``pred`` with each abstention (None/NaN) where the consensus exists replaced by the
    worst answer (module docstring): the farther end of ``levels`` for an ordinal scale, else
    :data:`ABSTAINED`. Items without a consensus are left as they are."""
    if len(pred) != len(consensus):
        raise ValueError("pred and consensus must have the same length")
    low = min(levels) if levels else None
    high = max(levels) if levels else None
    out: list[object] = []
    for p, c in zip(pred, consensus, strict=True):
        if not is_missing(p) or is_missing(c):
            out.append(p)
        elif low is not None and high is not None:
            value = as_number(c)
            out.append(high if value - low < high - value else low)
        else:
            out.append(ABSTAINED)
    return out


def abstain_as_miss_interval(
    pred: Sequence[object],
    consensus: Sequence[object],
    *,
    levels: Sequence[float] | None = None,
    weights: Weights = "quadratic",
    groups: Sequence[Hashable | None] | None = None,
    coefficient: Coefficient = "kappa",
    method: Method = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
    min_units: int = MIN_UNITS,
) -> KappaInterval:
    """Kappa (or AC2) of the worst-case answers against the consensus over every item with a
    consensus, with its interval (:func:`kappa_interval`). ``levels`` for an ordinal scale
    (weights as given); without them the answers are labels and ``weights`` should be None."""
    answers = worst_case_answers(pred, consensus, levels)
    return kappa_interval(
        answers,
        list(consensus),
        weights,
        numeric=levels is not None,
        levels=levels,
        groups=groups,
        method=method,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        min_units=min_units,
        coefficient=coefficient,
    )
