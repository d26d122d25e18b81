"""Monte Carlo error of a bootstrap bound, and whether a threshold lies within it.

A bootstrap bound is a quantile of B resampled values; another seed gives another B values
and a slightly different bound. The bound that infinitely many resamples would give is the
same quantile of the bootstrap distribution, and the order statistics of B draws bracket it:
the number of draws below it is Binomial(B, p), so a pair of order statistics covers it with
known probability (the distribution-free interval of a quantile, ``scipy.stats.quantile_test``).
That interval is the bound's Monte Carlo interval; its half-width is the Monte Carlo error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class MonteCarloInterval:
    """Where the bound of infinitely many resamples lies, with ``confidence``."""

    low: float
    high: float
    confidence: float = 0.95

    @property
    def error(self) -> float:
        """Half the interval's width (the Monte Carlo error of the bound)."""
        return (self.high - self.low) / 2

    def contains(self, threshold: float) -> bool:
        return self.low <= threshold <= self.high


def quantile_mc_interval(
    values: FloatArray | Sequence[float], level: float, confidence: float = 0.95
) -> MonteCarloInterval:
    """The Monte Carlo interval of the ``level`` quantile of ``values`` (resampled statistics,
    undefined ones already replaced by the worst value): order statistics whose binomial
    coverage of the true quantile is at least ``confidence``. An end beyond the sample is
    the sample's extreme (the quantile lies beyond what B resamples can place)."""
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0 or not 0 < level < 1:
        return MonteCarloInterval(math.nan, math.nan, confidence)
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    ci = stats.quantile_test(data, p=level).confidence_interval(confidence)
    low = float(ci.low) if math.isfinite(ci.low) else float(data.min())
    high = float(ci.high) if math.isfinite(ci.high) else float(data.max())
    return MonteCarloInterval(low, high, confidence)


def within_mc_error(bound: MonteCarloInterval | None, threshold: float) -> bool:
    """True when ``threshold`` lies inside the bound's Monte Carlo interval: another set of
    resamples could put the bound on the other side, so a decision at the threshold is not
    settled (the gate says caution). False without an interval (a deterministic bound)."""
    return bound is not None and math.isfinite(bound.low) and bound.contains(threshold)
