"""A like-for-like "trusted" test with a stated error rate (issue 23, part 5).

The line (0.58 in Kumar et al.) is the median agreement of *two single experts*. Comparing a
panel with the experts' *consensus* flatters it (a median of three is less noisy than any one
expert: +0.055 on the Kumar data), and testing the point estimate against the line lets a
judge below the line through whenever sampling error lifts it (20% of 50-item calibrations at
a true kappa of 0.51). So:

    statistic: the panel's kappa against each single expert, averaged over the experts
               (like for like with the expert pairs behind the line);
    trusted:   its one-sided lower confidence bound (``TRUST_CONFIDENCE``) is at or above the
               line, the bound is not within its Monte Carlo error of the line, the interval
               rests on at least ``MIN_UNITS`` independent units, and every consensus level
               present holds at least ``MIN_UNITS_PER_LEVEL`` units.

A test of H0: kappa < line at level 1 - ``TRUST_CONFIDENCE``: a panel whose true kappa against
a single expert is below the line is trusted in at most that share of calibrations (checked by
``evidence.trust_error_rate`` at 50, 100 and 200 items: evidence/TRUST.md, section 5).
"""

from __future__ import annotations

from collections import Counter
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
from judge.reliability._levels import MIN_UNITS_PER_LEVEL, LevelCheck, check_levels
from judge.reliability._mc_error import within_mc_error
from judge.reliability._median_rater import median_rater
from judge.reliability._missing import is_missing, label

#: the one-sided confidence of the lower bound that decides "trusted" (evidence/TRUST.md, 5)
TRUST_CONFIDENCE = 0.95
STATISTIC = "mean kappa of the panel against each single expert"


@dataclass(frozen=True)
class TrustDecision:
    """The decision, why not (``reasons``, empty when trusted) and the statistics behind it:
    the like-for-like ``interval`` (estimate, one-sided ``lower`` with its Monte Carlo
    interval, n, units), each expert's kappa with the panel, and the panel's kappa against
    the consensus (today's figure, for reference; it does not decide)."""

    trusted: bool
    reasons: tuple[str, ...]
    line: float
    interval: KappaInterval
    per_expert: Mapping[str, float]
    consensus_kappa: float
    levels: LevelCheck
    statistic: str = STATISTIC


def _consensus(columns: Sequence[Sequence[object]], ordinal: bool) -> list[object]:
    if ordinal:
        return list(median_rater(*columns))
    out: list[object] = []
    for row in zip(*columns, strict=True):
        present = [label(v) for v in row if not is_missing(v)]
        if not present:
            out.append(None)
            continue
        counts = Counter(present)
        best = max(counts.values())
        out.append(sorted((v for v in counts if counts[v] == best), key=repr)[0])
    return out


def like_for_like_trust(
    panel: Sequence[object],
    experts: Mapping[str, Sequence[object]],
    *,
    line: float,
    levels: Sequence[float] | None = None,
    weights: Weights = "quadratic",
    groups: Sequence[Hashable | None] | None = None,
    confidence: float = TRUST_CONFIDENCE,
    method: Method = DEFAULT_METHOD,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    min_units: int = MIN_UNITS,
    min_units_per_level: int = MIN_UNITS_PER_LEVEL,
) -> TrustDecision:
    """Decide "trusted" for a panel's ratings (``panel``, one per item; None = abstained)
    against one or more experts' columns (aligned by item), on an ordinal scale with
    ``levels`` (weights as given) or, without ``levels``, on labels (use ``weights=None``).
    Every pair (panel, expert) uses the items both rated; all pairs resample the same units
    (``groups``; None = an item of its own). ValueError without an expert."""
    if not experts:
        raise ValueError("like-for-like trust needs at least one expert")
    names = list(experts)
    columns = [experts[name] for name in names]
    parts = shared_unit_kappas(
        [(panel, column) for column in columns], weights, levels=levels, groups=groups
    )
    interval = engine_interval(
        MeanStatistic(tuple(parts)),
        method=method,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        min_units=min_units,
    )
    consensus = _consensus(columns, ordinal=levels is not None)
    consensus_kappa = shared_unit_kappas(
        [(panel, consensus)], weights, levels=levels, groups=groups
    )[0].point()
    level_check = check_levels(consensus, groups, (), min_units_per_level)
    reasons: list[str] = []
    if interval.refused is not None:
        reasons.append("too_few_units")
    if not level_check.passes:
        reasons.append("levels_below_minimum_units")
    if interval.refused is None and not interval.lower >= line:
        reasons.append("lower_bound_below_line")
    if interval.refused is None and within_mc_error(interval.lower_mc, line):
        reasons.append("lower_bound_within_monte_carlo_error_of_line")
    return TrustDecision(
        trusted=not reasons,
        reasons=tuple(dict.fromkeys(reasons)),
        line=line,
        interval=interval,
        per_expert={name: part.point() for name, part in zip(names, parts, strict=True)},
        consensus_kappa=consensus_kappa,
        levels=level_check,
    )
