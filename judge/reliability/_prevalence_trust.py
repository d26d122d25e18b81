"""The line test under kappa's prevalence paradox: AC2, like for like (issue 23, part 4).

When one consensus level holds more than ``PARADOX_SHARE`` of the items, kappa falls faster
than the judge's skill (evidence/TRUST.md, section 4), so a kappa line of 0.58 asks more of a
judge there than of one on a balanced dimension. Gwet's AC2 is not so distorted, but 0.58 in
AC2 is no standard either: under the paradox even a constant judge has a high AC2. So the
line is replaced by the experts themselves, in AC2:

    D = mean AC2 of the panel against each single distinct expert
        - mean AC2 of the pairs of distinct experts,

all pairs resampled on the same units (the cluster-robust ``robust`` interval). Trusted
when D's one-sided 99% lower bound (``AC2_CONFIDENCE``) is at or above 0 (the panel agrees
with one expert at least as well as two experts agree with each other), outside its Monte
Carlo error, *and* the panel's like-for-like kappa has a one-sided lower bound above 0
(agreement beyond chance by kappa's own correction; a constant judge has kappa 0).

A test of H0: D < 0. At D = 0 a 95% bound trusted 6.8% (50 items) and 9.3% (100 items) of
calibrations, so the bound is one-sided 99%: 1.0%, 3.6% and 2.2% at 50,
100 and 200 items (``evidence.prevalence_trust``,
evidence/TRUST.md section 4b). It needs two distinct experts; with one, kappa's line test
stands.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from judge.reliability._cluster_kappa import FloatArray, MeanStatistic
from judge.reliability._kappa import Weights
from judge.reliability._kappa_interval import (
    DEFAULT_METHOD,
    DEFAULT_RESAMPLES,
    MIN_UNITS,
    KappaInterval,
    Method,
    engine_interval,
    shared_unit_kappas,
)

#: the one-sided confidence of D's lower bound (evidence/TRUST.md, section 4)
AC2_CONFIDENCE = 0.99
#: the reasons of the AC2 test when it does not pass
AC2_BELOW_EXPERTS = "ac2_lower_bound_below_experts"
AC2_WITHIN_MC_ERROR = "ac2_lower_bound_within_monte_carlo_error"


@dataclass(frozen=True)
class DifferenceStatistic:
    """``plus - minus`` of two means over the same units."""

    plus: MeanStatistic
    minus: MeanStatistic

    @property
    def units(self) -> int:
        return self.plus.units

    @property
    def n(self) -> int:
        return self.plus.n

    def point(self) -> float:
        return self.plus.point() - self.minus.point()

    def resampled(self, draws: FloatArray) -> FloatArray:
        out: FloatArray = self.plus.resampled(draws) - self.minus.resampled(draws)
        return out

    def jackknife(self) -> FloatArray:
        out: FloatArray = self.plus.jackknife() - self.minus.jackknife()
        return out


def ac2_versus_experts(
    panel: Sequence[object],
    experts: Mapping[str, Sequence[object]],
    *,
    levels: Sequence[float] | None = None,
    weights: Weights = "quadratic",
    groups: Sequence[Hashable | None] | None = None,
    confidence: float = AC2_CONFIDENCE,
    method: Method = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    min_units: int = MIN_UNITS,
) -> KappaInterval:
    """D of the module docstring with its interval (``lower``: the one-sided bound at
    ``confidence``, with its Monte Carlo interval). ``levels``: an ordinal scale (``weights``
    as given), else labels (``weights=None``: AC1). ValueError with fewer than two experts
    or fewer than two categories."""
    columns = list(experts.values())
    if len(columns) < 2:
        raise ValueError("the AC2 test needs two or more experts")
    expert_pairs = list(itertools.combinations(columns, 2))
    parts = shared_unit_kappas(
        [*((panel, c) for c in columns), *expert_pairs],
        weights,
        levels=levels,
        groups=groups,
        coefficient="ac2",
    )
    statistic = DifferenceStatistic(
        MeanStatistic(tuple(parts[: len(columns)])), MeanStatistic(tuple(parts[len(columns) :]))
    )
    return engine_interval(
        statistic,
        method=method,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        min_units=min_units,
    )


def ac2_reasons(interval: KappaInterval) -> list[str]:
    """Why the AC2 test does not pass (empty: it passes); a refused interval is the caller's
    ``too_few_units``."""
    if interval.refused is not None:
        return []
    out = []
    if not interval.lower >= 0:
        out.append(AC2_BELOW_EXPERTS)
    mc = interval.lower_mc
    if mc is not None and np.isfinite(mc.low) and mc.contains(0.0):
        out.append(AC2_WITHIN_MC_ERROR)
    return out
