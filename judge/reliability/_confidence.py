"""Confidence of a panel's answer on one item and dimension, and its calibration.

Features (from what a panel produces; each in [0, 1], 1 = most confident):
- *range agreement* (ordinal): ``1 - (max - min) / (scale max - scale min)`` over the valid
  judges' ratings: the panel's spread, on the scale's span (with a tolerance of k levels, the
  spread beyond k on the span beyond k);
- *modal agreement*: the share of valid judges giving the most frequent answer, rescaled so
  that all judges differing is 0 and all agreeing is 1: ``(share - 1/J) / (1 - 1/J)`` (with
  a tolerance of k levels, judges within k of one judge's rating count as agreeing); for
  ranked scales it is computed on the judges' first choices (top-1 agreement);
- *self-consistency*, when judges were sampled k times: per judge, the same agreement
  measure over its own samples, averaged over the judges.
The confidence is the mean of the features present. It needs at least two judges or two
samples: a single recorded rating carries no agreement signal, so its confidence is NaN
(never kept by a threshold).

Calibration to P(agreement with the experts): isotonic regression (scipy's pool-adjacent-
violators) on the calibration items, binned by confidence value, with a Beta(1, 1) prior per
bin. Why: confidences from a few judges take few distinct values (three judges on a five-
point scale give about eight) and a calibration run has tens of items per dimension.
Isotonic regression assumes only that more agreement within the panel never means less
agreement with experts, pools neighbouring bins that break that order (the stability a few
items need) and is exact where bins are large. Platt/logistic scaling was rejected: it
imposes a logistic shape and its fit diverges when every high-confidence item agrees
(separation), which is common on these data. The prior keeps a bin of three agreeing items
from being calibrated to certainty.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _as_labels(row: Sequence[float]) -> list[Hashable | None]:
    return [None if math.isnan(v) else v for v in row]


def _modal_agreement(
    rows: Sequence[Sequence[Hashable | None]], tolerance: float = 0.0
) -> FloatArray:
    out = np.full(len(rows), np.nan)
    for i, row in enumerate(rows):
        valid = [v for v in row if v is not None and not (isinstance(v, float) and math.isnan(v))]
        if len(valid) < 2:
            continue
        if tolerance > 0:  # ordinal: the most judges within the tolerance of one judge's rating
            top = max(sum(abs(w - v) <= tolerance + 1e-9 for w in valid) for v in valid)  # type: ignore[operator]
        else:
            top = max(valid.count(v) for v in set(valid))
        share = top / len(valid)
        out[i] = (share - 1 / len(valid)) / (1 - 1 / len(valid))
    return out


def _range_agreement(ratings: FloatArray, span: float, tolerance: float = 0.0) -> FloatArray:
    """``1 - max(0, spread - tolerance) / (span - tolerance)`` over the last axis; NaN with
    fewer than two valid values."""
    missing = np.isnan(ratings)
    valid = (~missing).sum(axis=-1)
    spread = np.where(missing, -np.inf, ratings).max(axis=-1) - np.where(
        missing, np.inf, ratings
    ).min(axis=-1)
    excess = np.maximum(spread - tolerance, 0.0) / (span - tolerance)
    return np.where(valid >= 2, 1 - excess, np.nan)


def _nan_mean(stack: FloatArray) -> FloatArray:
    """Mean over axis 0 of the values present (NaN where none is), without warnings."""
    present = ~np.isnan(stack)
    count = present.sum(axis=0)
    total = np.where(present, stack, 0.0).sum(axis=0)
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


@dataclass(frozen=True)
class PanelFeatures:
    """Per item: the number of valid judges and each confidence feature (NaN = absent)."""

    judges: npt.NDArray[np.int64]
    range_agreement: FloatArray
    modal_agreement: FloatArray
    self_consistency: FloatArray

    def confidence(self) -> FloatArray:
        """The mean of the features present per item (NaN when none is)."""
        return _nan_mean(
            np.vstack([self.range_agreement, self.modal_agreement, self.self_consistency])
        )


def ordinal_features(
    ratings: Sequence[Sequence[float]] | FloatArray,
    scale_min: float,
    scale_max: float,
    samples: FloatArray | None = None,
    tolerance: float = 0.0,
) -> PanelFeatures:
    """Features of ordinal ratings, (items, judges) with NaN for an abstention; ``samples``
    (items, judges, k) when each judge was sampled k times (NaN for a missing sample).
    ``tolerance``: when agreement with the experts is counted within k levels, judges within
    k levels of each other count as agreeing (spread beyond k, modal share within k)."""
    if scale_max - scale_min <= tolerance:
        raise ValueError("the scale must span more than the tolerance")
    grid = np.asarray(ratings, dtype=np.float64)
    if grid.ndim != 2:
        raise ValueError("ratings must be (items, judges)")
    span = scale_max - scale_min
    judges = (~np.isnan(grid)).sum(axis=1).astype(np.int64)
    rows = [_as_labels(row) for row in grid.tolist()]
    consistency = np.full(len(grid), np.nan)
    if samples is not None:
        cube = np.asarray(samples, dtype=np.float64)
        if cube.ndim != 3 or cube.shape[:2] != grid.shape:
            raise ValueError("samples must be (items, judges, k)")
        per_judge = []  # each judge's own agreement across its samples: range, modal
        for j in range(cube.shape[1]):
            own = cube[:, j, :]
            per_judge.append(_range_agreement(own, span, tolerance))
            per_judge.append(_modal_agreement([_as_labels(s) for s in own.tolist()], tolerance))
        consistency = _nan_mean(np.vstack(per_judge))
    return PanelFeatures(
        judges,
        _range_agreement(grid, span, tolerance),
        _modal_agreement(rows, tolerance),
        consistency,
    )


def label_features(
    votes: Sequence[Sequence[Hashable | None]],
    samples: Sequence[Sequence[Sequence[Hashable | None]]] | None = None,
) -> PanelFeatures:
    """Features of nominal or binary labels (or a ranked scale's first choices), (items,
    judges) with None for an abstention; ``samples`` per item and judge, a list of k labels."""
    judges = np.array([sum(v is not None for v in row) for row in votes], dtype=np.int64)
    consistency = np.full(len(votes), np.nan)
    if samples is not None:
        if len(samples) != len(votes):
            raise ValueError("one list of samples per item")
        for i, per_judge in enumerate(samples):
            consistency[i] = _nan_mean(_modal_agreement(per_judge)[:, None])[0]
    return PanelFeatures(judges, np.full(len(votes), np.nan), _modal_agreement(votes), consistency)


@dataclass(frozen=True)
class ConfidenceCalibration:
    """A monotone step map from confidence to P(agreement with the experts): bin ``i``
    holds confidences from ``edges[i]`` up to the next edge; below the first edge the first
    bin's value applies. ``counts``/``agreed`` are the calibration items per bin."""

    edges: tuple[float, ...]
    probabilities: tuple[float, ...]
    counts: tuple[int, ...]
    agreed: tuple[int, ...]

    def predict(self, confidence: Sequence[float] | FloatArray) -> FloatArray:
        """P(agreement) per item (NaN for a NaN confidence)."""
        conf = np.asarray(confidence, dtype=np.float64)
        if not self.edges:
            return np.full(conf.shape, np.nan)
        idx = np.clip(np.searchsorted(np.asarray(self.edges), conf, side="right") - 1, 0, None)
        probs = np.asarray(self.probabilities)[idx]
        return np.where(np.isnan(conf), np.nan, probs)


def fit_confidence_calibration(
    confidence: Sequence[float] | FloatArray,
    agreed: Sequence[bool] | BoolArray,
    max_bins: int = 10,
    prior: tuple[float, float] = (1.0, 1.0),
) -> ConfidenceCalibration:
    """Isotonic calibration (see the module docstring). Items with NaN confidence are left
    out. With more distinct confidences than ``max_bins``, bins are equal-count ranges."""
    conf = np.asarray(confidence, dtype=np.float64)
    ok = np.asarray(agreed, dtype=np.bool_)
    if conf.shape != ok.shape:
        raise ValueError("one agreement per confidence")
    keep = ~np.isnan(conf)
    conf, ok = conf[keep], ok[keep]
    if len(conf) == 0:
        return ConfidenceCalibration((), (), (), ())
    edges = np.unique(conf)
    if len(edges) > max_bins:
        edges = np.unique(np.quantile(conf, np.linspace(0, 1, max_bins + 1)[:-1], method="lower"))
    bins = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, None)
    counts = np.bincount(bins, minlength=len(edges))
    hits = np.bincount(bins, weights=ok.astype(np.float64), minlength=len(edges))
    a, b = prior
    smoothed = (hits + a) / (counts + a + b)
    from scipy.optimize import isotonic_regression  # lazily: ~1 s of CPU per process

    fitted = isotonic_regression(smoothed, weights=counts + a + b, increasing=True).x
    return ConfidenceCalibration(
        tuple(float(e) for e in edges),
        tuple(float(p) for p in fitted),
        tuple(int(c) for c in counts),
        tuple(int(h) for h in hits),
    )
