"""Selective trust with a guarantee (Jung, Brahman and Choi, ICLR 2025, arXiv 2407.18370).

A panel's answer on an item is *kept* (trusted without a person) when its confidence is at
least a threshold. The threshold is chosen on calibration items so that, with probability at
least ``1 - delta`` over the calibration draw, the rate of agreement with the experts on the
items kept is at least ``1 - alpha`` (items exchangeable with the calibration's, as for
conformal prediction).

Procedure (fixed-sequence testing, as in Learn-then-Test): for thresholds from the strictest
to the most lenient, test ``H: P(disagree | confidence >= t) > alpha`` with the exact binomial
p-value ``P(Binomial(n_t, alpha) <= errors_t)`` on the ``n_t`` calibration items kept at
``t``; walk down while the hypothesis is rejected at level ``delta`` and stop at the first
failure. The last rejected threshold is chosen. The order is fixed before looking at the
agreement labels, so no multiplicity correction is needed. A threshold that keeps no
calibration item is passed over (nothing kept, nothing wrong) but is never chosen.

Agreement is decided by :func:`agreement_within`: the panel's score within ``k`` scale levels
of the expert consensus (exact match for ``k = 0``; for labels, equality).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
SelectiveStatus = Literal["guaranteed", "too_few_calibration_units", "no_threshold_passes"]
_EPS = 1e-9


@dataclass(frozen=True)
class ThresholdStep:
    """One threshold of the curve: calibration items kept, their disagreements, the
    p-value; ``tested`` is False after the sequence stopped."""

    threshold: float
    kept: int
    errors: int
    agreement: float  # on the kept items (NaN when none is kept)
    coverage: float  # kept / calibration items
    p_value: float
    tested: bool
    passed: bool


@dataclass(frozen=True)
class SelectiveThreshold:
    """The chosen threshold (None unless ``status == "guaranteed"``), the share of
    calibration items it keeps and their agreement, and the whole curve."""

    status: SelectiveStatus
    threshold: float | None
    coverage: float
    agreement: float
    n: int
    alpha: float
    delta: float
    min_units: int
    curve: tuple[ThresholdStep, ...]


def selective_min_units(alpha: float, delta: float) -> int:
    """The fewest kept items for which zero disagreements can pass: ``(1 - alpha)^n <= delta``."""
    _check(alpha, delta)
    return math.ceil(math.log(delta) / math.log(1 - alpha) - _EPS)


def _check(alpha: float, delta: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def binomial_p_value(errors: int, kept: int, alpha: float) -> float:
    """``P(Binomial(kept, alpha) <= errors)``: small when the disagreement rate is below
    ``alpha``; 1 for an empty set."""
    if kept == 0:
        return 1.0
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    return float(stats.binom.cdf(errors, kept, alpha))


def agreement_within(
    scores: Sequence[float] | FloatArray, consensus: Sequence[float] | FloatArray, k: float = 0
) -> BoolArray:
    """Whether the score is within ``k`` levels of the consensus (a missing one never is)."""
    a = np.asarray(scores, dtype=np.float64)
    b = np.asarray(consensus, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.asarray(np.abs(a - b) <= k + _EPS, dtype=np.bool_)


def selective_threshold(
    confidence: Sequence[float] | FloatArray,
    agreed: Sequence[bool] | BoolArray,
    alpha: float,
    delta: float,
    grid: Sequence[float] | None = None,
) -> SelectiveThreshold:
    """Choose the confidence threshold by fixed-sequence testing (see the module docstring).

    ``confidence`` and ``agreed`` are per calibration item (an item with NaN confidence has
    no panel answer and is never kept). ``grid`` defaults to the distinct confidences,
    strictest first; any grid must be fixed without looking at ``agreed``."""
    _check(alpha, delta)
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(agreed, dtype=np.bool_)
    if conf.shape != ok.shape:
        raise ValueError("one agreement per confidence")
    n = len(conf)
    need = selective_min_units(alpha, delta)
    values = np.unique(conf[~np.isnan(conf)]) if grid is None else np.asarray(grid, float)
    steps: list[ThresholdStep] = []
    going = True
    chosen: ThresholdStep | None = None
    for t in sorted(values.tolist(), reverse=True):
        with np.errstate(invalid="ignore"):
            kept = conf >= t - _EPS
        m = int(kept.sum())
        errors = int((~ok[kept]).sum())
        p = binomial_p_value(errors, m, alpha)
        tested = going
        passed = tested and (m == 0 or p <= delta)
        going = passed
        step = ThresholdStep(
            threshold=float(t),
            kept=m,
            errors=errors,
            agreement=1 - errors / m if m else math.nan,
            coverage=m / n if n else 0.0,
            p_value=p,
            tested=tested,
            passed=passed,
        )
        steps.append(step)
        if passed and m > 0:
            chosen = step
    if chosen is None:
        status: SelectiveStatus = "too_few_calibration_units" if n < need else "no_threshold_passes"
        return SelectiveThreshold(status, None, 0.0, math.nan, n, alpha, delta, need, tuple(steps))
    return SelectiveThreshold(
        "guaranteed",
        chosen.threshold,
        chosen.coverage,
        chosen.agreement,
        n,
        alpha,
        delta,
        need,
        tuple(steps),
    )


def kept_by(confidence: Sequence[float] | FloatArray, threshold: float | None) -> BoolArray:
    """The items kept at ``threshold`` (none when no threshold was guaranteed)."""
    conf = np.asarray(confidence, dtype=np.float64)
    if threshold is None:
        return np.zeros(conf.shape, dtype=np.bool_)
    with np.errstate(invalid="ignore"):
        return np.asarray(conf >= threshold - _EPS, dtype=np.bool_)
