"""The run's own expert-expert baseline: distinct annotators, and its interval (issue 23, 6).

A calibration's expert-expert agreement may stand in for the published prior. Two checks
keep that from being gamed:

- *distinct annotators*: two columns that are the same annotator twice (a copied file, one
  person under two names) agree perfectly and would set the baseline to 1. A pair is refused
  when its columns are identical on every item both rated (at least two), or near-identical:
  exact agreement above ``NEAR_IDENTICAL_AGREEMENT`` on at least ``NEAR_IDENTICAL_MIN_ITEMS``
  items. (Real expert pairs in Kumar et al. agree exactly on at most 0.90 of 50 items on the
  3-level EPITOME scale and far less on 5- and 7-level scales: evidence/TRUST.md, section 6.)
- *an interval*: the baseline is the mean kappa over the accepted pairs with the same
  cluster-robust interval as the panel's, so the gate can compare the interval, not the point:
  ``low_expert_agreement`` when even the upper end is below the floor,
  ``expert_agreement_uncertain`` when the lower bound is below the floor (or
  ``expert_lower_bound_within_monte_carlo_error_of_floor`` when it clears it by less than
  its Monte Carlo error),
  ``expert_agreement_moderate`` when the estimate is below the line.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

from judge.reliability._cluster_kappa import MeanStatistic
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
from judge.reliability._mc_error import within_mc_error
from judge.reliability._missing import is_missing, label

#: exact agreement above which two columns on enough items count as the same annotator
NEAR_IDENTICAL_AGREEMENT = 0.98
#: items both rated from which near-identical (not just identical) columns are refused
NEAR_IDENTICAL_MIN_ITEMS = 20


@dataclass(frozen=True)
class DistinctCheck:
    """Whether two annotator columns count as distinct annotators, and why not."""

    distinct: bool
    exact_agreement: float
    n: int
    reason: str | None = None


def distinct_annotators(
    a: Sequence[object],
    b: Sequence[object],
    *,
    max_agreement: float = NEAR_IDENTICAL_AGREEMENT,
    min_items: int = NEAR_IDENTICAL_MIN_ITEMS,
) -> DistinctCheck:
    """The module docstring's check on the items both columns rated. Fewer than two such
    items: not distinct (nothing to compare)."""
    if len(a) != len(b):
        raise ValueError("a and b must have the same length")
    both = [
        (label(x), label(y))
        for x, y in zip(a, b, strict=True)
        if not is_missing(x) and not is_missing(y)
    ]
    n = len(both)
    if n < 2:
        return DistinctCheck(False, math.nan, n, f"{n} item(s) rated by both")
    same = sum(x == y for x, y in both) / n
    if same == 1.0:
        return DistinctCheck(False, same, n, f"identical columns on all {n} items both rated")
    if n >= min_items and same > max_agreement:
        return DistinctCheck(
            False,
            same,
            n,
            f"near-identical columns: exact agreement {same:.3f} on {n} items "
            f"(above {max_agreement} on at least {min_items})",
        )
    return DistinctCheck(True, same, n)


@dataclass(frozen=True)
class ExpertBaseline:
    """Per pair of experts its kappa and distinctness; the mean kappa over the accepted pairs
    with its interval (None without an accepted pair); and the gate's reasons."""

    pairs: Mapping[tuple[str, str], float]
    checks: Mapping[tuple[str, str], DistinctCheck]
    interval: KappaInterval | None

    @property
    def accepted(self) -> list[tuple[str, str]]:
        return [p for p, c in self.checks.items() if c.distinct]

    def reasons(self, floor: float, line: float) -> list[str]:
        """Caution/untrusted reasons of the baseline against ``floor`` and ``line``: the
        interval, not the point, is compared with the floor (module docstring)."""
        iv = self.interval
        if iv is None or iv.refused is not None:
            return ["expert_agreement_unknown"]
        out = []
        if iv.high < floor:
            out.append("low_expert_agreement")
        elif not iv.lower >= floor:
            out.append("expert_agreement_uncertain")
        elif within_mc_error(iv.lower_mc, floor):
            out.append("expert_lower_bound_within_monte_carlo_error_of_floor")
        if iv.estimate < line:
            out.append("expert_agreement_moderate")
        return out


def expert_baseline(
    experts: Mapping[str, Sequence[object]],
    *,
    levels: Sequence[float] | None = None,
    weights: Weights = "quadratic",
    groups: Sequence[Hashable | None] | None = None,
    confidence: float = 0.95,
    method: Method = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    min_units: int = MIN_UNITS,
) -> ExpertBaseline:
    """Every pair of ``experts`` (name -> column, aligned by item) checked for distinctness;
    the mean kappa of the accepted pairs with its interval, all pairs resampling the same
    units. ``levels``: an ordinal scale; without it the ratings are labels (weights None)."""
    names = list(experts)
    pairs = list(itertools.combinations(names, 2))
    checks = {p: distinct_annotators(experts[p[0]], experts[p[1]]) for p in pairs}
    if not pairs:
        return ExpertBaseline({}, {}, None)
    try:
        stats = shared_unit_kappas(
            [(experts[x], experts[y]) for x, y in pairs], weights, levels=levels, groups=groups
        )
    except ValueError:  # every expert gave one and the same label: kappa is undefined
        return ExpertBaseline({}, checks, None)
    kappas = {p: s.point() for p, s in zip(pairs, stats, strict=True)}
    accepted = [s for p, s in zip(pairs, stats, strict=True) if checks[p].distinct]
    interval = (
        engine_interval(
            MeanStatistic(tuple(accepted)),
            method=method,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
            min_units=min_units,
        )
        if accepted
        else None
    )
    return ExpertBaseline(kappas, checks, interval)
