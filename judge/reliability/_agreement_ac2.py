"""Gwet's AC2 (ordinal weights) and the rule for when the gate reads it instead of kappa.

Kappa's prevalence paradox: kappa's chance agreement is the product of the two raters'
marginals, so when one level dominates, chance agreement is high and kappa is low even for a
judge that is as accurate on every level as on a balanced set (a judge right 90% of the time
on each of two levels has kappa 0.80 at 50% prevalence, 0.72 at 80%, 0.59 at 90%:
``evidence.prevalence_paradox``). Gwet's AC2 takes chance agreement from the *mean* of the two
raters' shares and the weights, which does not collapse there.

AC2 alone can be gamed, though: a judge that always answers the dominant level has kappa 0
but a high AC2 (0.89 at 90% prevalence). So the rule (``agreement_for_gate``):

- *no paradox* (the most frequent consensus level holds at most ``PARADOX_SHARE`` of the
  units): the gate reads kappa;
- *paradox*: the gate reads AC2 for the line, but only for a judge shown to agree beyond
  chance by kappa too (kappa's one-sided lower bound above 0); otherwise it reads kappa, whose
  lower bound is then at or below 0, i.e. below the floor.

Either way both statistics are reported, with their intervals.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from judge.reliability._cluster_kappa import ac2_from_counts
from judge.reliability._kappa import Weights
from judge.reliability._kappa_interval import KappaInterval
from judge.reliability._missing import is_missing, label, paired
from judge.reliability._paired import weight_matrix
from judge.reliability._scale_kappa import scale_codes, scale_grid

#: the share of units of the most frequent consensus level above which kappa's prevalence
#: paradox applies (evidence/TRUST.md, section 4)
PARADOX_SHARE = 0.8


def gwet_ac2(
    a: Sequence[object],
    b: Sequence[object],
    levels: Sequence[float],
    weights: Weights = "quadratic",
) -> float:
    """Gwet's AC2 of two raters on an ordinal scale with ``levels`` (items missing in either
    are dropped); the categories are the scale's full grid (its half-step grid when a
    consensus lies midway), weights ``1 - ((i - j) / (q - 1))**2`` (quadratic),
    ``1 - |i - j| / (q - 1)`` (linear) or identity (None, which is AC1), as irrCAC's
    ``CAC(..., weights=..., categories=<grid>).gwet()``. NaN without a paired item."""
    xa, xb = paired(a, b)
    if not xa:
        return math.nan
    grid = scale_grid(levels, [*xa, *xb])
    k = len(grid)
    ca, cb = scale_codes(xa, grid), scale_codes(xb, grid)
    counts = np.bincount(ca * k + cb, minlength=k * k).astype(np.float64)
    return float(ac2_from_counts(counts[None, :], k, weight_matrix(k, weights))[0])


@dataclass(frozen=True)
class Prevalence:
    """The most frequent consensus level, its units and share of all units."""

    level: Hashable
    units: int
    share: float
    total_units: int

    @property
    def paradox(self) -> bool:
        return self.share > PARADOX_SHARE


def dominant_level(
    consensus: Sequence[Hashable | None], groups: Sequence[Hashable | None] | None = None
) -> Prevalence | None:
    """The most frequent consensus level by *items* share (ties: the first in sorted order),
    over items with a consensus; ``units`` counts the independent units (groups, or items)
    where it occurs. None without a consensus."""
    keep = [i for i, v in enumerate(consensus) if not is_missing(v)]
    if not keep:
        return None
    counts = Counter(label(consensus[i]) for i in keep)
    best = max(counts.values())
    level = sorted((v for v in counts if counts[v] == best), key=repr)[0]
    unit_of = [("i", i) if groups is None or groups[i] is None else ("g", groups[i]) for i in keep]
    units = {u for i, u in zip(keep, unit_of, strict=True) if label(consensus[i]) == level}
    return Prevalence(level, len(units), best / len(keep), len(set(unit_of)))


@dataclass(frozen=True)
class GateAgreement:
    """Which statistic the line test reads (``metric``), its estimate and one-sided lower
    bound, and why."""

    metric: str
    estimate: float
    lower: float
    reason: str


def agreement_for_gate(
    kappa: KappaInterval, ac2: KappaInterval, prevalence: Prevalence | None
) -> GateAgreement:
    """The module docstring's rule: kappa, or AC2 under the prevalence paradox for a judge
    whose kappa is shown above chance."""
    if prevalence is None or not prevalence.paradox:
        return GateAgreement("kappa", kappa.estimate, kappa.lower, "no_prevalence_paradox")
    if math.isfinite(kappa.lower) and kappa.lower > 0:
        return GateAgreement(
            "ac2",
            ac2.estimate,
            ac2.lower,
            f"prevalence_paradox: level {prevalence.level!r} holds "
            f"{prevalence.share:.0%} of the items; kappa's lower bound is above 0",
        )
    return GateAgreement(
        "kappa",
        kappa.estimate,
        kappa.lower,
        f"prevalence_paradox: level {prevalence.level!r} holds {prevalence.share:.0%} of the "
        "items, but kappa does not show agreement beyond chance, so AC2 cannot stand in",
    )
