"""Planning at a stated assurance: how many units make the lower bound reach a target with
probability ``assurance`` (issue 23, part 9).

A point projection (the lower bound narrowing like 1/sqrt(n) around the current estimate)
reaches its target only about half the time (62% measured in the issue): the estimate is
uncertain. The plan is sized at a truth the calibration supports, not at its estimate:

1. the planning kappa ``kappa_L``: the calibration's one-sided lower bound at
   ``planning_confidence`` (default: the assurance itself; the gate's robust interval). When
   it is below the target, no size is planned (``unreachable_at_assurance``);
2. a population whose kappa is exactly ``kappa_L`` and otherwise like the calibrated units:
   the units themselves, with the first rater's (the panel's) answers replaced, in a share
   ``1 - kappa_L / kappa`` of the units, by a label drawn from that rater's own marginal
   (independent of the second rater). Both marginals stay, the observed disagreement moves
   towards chance, and any kappa (weighted or not) scales by exactly ``kappa_L / kappa``;
3. the follow-up calibration the plan asks for: *the calibrated units themselves* plus
   ``m - G`` new units from that population (the plan's ``additional_items`` are added to
   the run's, and the gate then reads them all), and its one-sided lower bound
   ``kappa - f * t_{m-1}(confidence) * SE``, with the cluster-robust linearised SE, widened by
   ``f >= 1``: how much farther below the estimate the gate's own bound (the robust interval)
   lies on the calibrated units (:func:`gate_widening`).

The plan is the smallest m > G whose share of simulated follow-ups reaching the target is at
least ``assurance``. What it states: if the dimension's true kappa is at or above
``kappa_L`` (the calibration supports that at ``planning_confidence``), the follow-up
reaches the target with probability ``assurance`` (the chance grows with the truth); no prior
over the truth is assumed. The first planners sized the follow-up over the bootstrap
distribution of the estimate (a flat prior) and delivered 74.5% at a nominal 80% when the
truth was spread over 0.50-0.75 (evidence/TRUST.md section 9b); this one: section 9c.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from judge.reliability._cluster_kappa import ClusterKappa
from judge.reliability._kappa_interval import engine_interval

FloatArray = NDArray[np.float64]

DEFAULT_ASSURANCE = 0.8


@dataclass(frozen=True)
class AssurancePlan:
    """``units`` needed (None: not reachable by ``max_units``, or ``planning_kappa`` below the
    target) and the simulated probability of reaching the target there (``probability``, at
    ``max_units`` when unreachable, 0 when not simulated); ``planning_kappa`` is the
    calibration's lower bound at ``planning_confidence`` the plan is sized at."""

    units: int | None
    probability: float
    planning_kappa: float
    planning_confidence: float
    target: float
    assurance: float
    simulations: int


def population_at(engine: ClusterKappa, kappa: float) -> tuple[ClusterKappa, FloatArray]:
    """A population of units like ``engine``'s whose kappa is ``kappa`` (at most the
    estimate): the calibrated units, and each of them with all of its first rater's answers
    set to one level, drawn from that rater's marginal; returns the units (``G + G * k``)
    and their probabilities. A share ``1 - kappa / estimate`` of the mass goes to the
    replaced units, so kappa scales by exactly ``kappa / estimate`` (both marginals kept)."""
    estimate = engine.point()
    g, k = engine.units, engine.k
    share = 0.0 if estimate <= 0 else min(1.0, max(0.0, 1.0 - kappa / estimate))
    tables = engine.cells.reshape(g, k, k)
    first = tables.sum(axis=(0, 2)) / tables.sum()
    replaced = np.zeros((g, k, k, k), dtype=np.float64)  # unit, level set, first, second
    for level in range(k):
        replaced[:, level, level, :] = tables.sum(axis=1)
    cells = np.concatenate([engine.cells, replaced.reshape(g * k, k * k)])
    probs = np.concatenate([np.full(g, (1 - share) / g), np.tile(share * first / g, g)])
    return ClusterKappa(cells, k, engine.wmat, engine.coefficient), probs


def _reach(
    population: ClusterKappa,
    probs: FloatArray,
    calibrated: int,
    m: int,
    target: float,
    confidence: float,
    rng: np.random.Generator,
    simulations: int,
    widen: float,
) -> float:
    """Share of follow-ups of m units (the ``calibrated`` units, the first ones of
    ``population``, plus m - G new ones drawn by ``probs``) whose lower bound reaches
    target."""
    draws = rng.multinomial(max(m - calibrated, 0), probs, size=simulations).astype(np.float64)
    draws[:, :calibrated] += 1.0
    estimate = population.resampled(draws)
    se = population.std_err(draws)
    from scipy import stats  # lazily: scipy.stats costs ~2 s of CPU per process

    lower = estimate - widen * float(stats.t.ppf(confidence, max(m - 1, 1))) * se
    ok = np.where(np.isfinite(lower), lower, -np.inf) >= target
    return float(ok.mean())


def gate_widening(engine: ClusterKappa, confidence: float, seed: int = 0) -> float:
    """How much farther below the estimate the gate's bound (the robust interval: the lower
    of the jackknife-t and percentile bounds) lies than the linearised t bound, on the
    calibrated units; at least 1. The simulated follow-ups' margins are widened by it, so
    the plan is for the gate's bound, not the cheaper one it simulates (at more units the two
    converge, so this errs towards more units)."""
    from scipy import stats

    estimate, se = engine.point(), float(engine.std_err()[0])
    margin = float(stats.t.ppf(confidence, max(engine.units - 1, 1))) * se
    gate = engine_interval(engine, confidence=confidence, seed=seed).lower
    if not (math.isfinite(gate) and math.isfinite(margin) and margin > 0):
        return 1.0
    return max(1.0, (estimate - gate) / margin)


def units_for_assurance(
    engine: ClusterKappa,
    target: float,
    *,
    assurance: float = DEFAULT_ASSURANCE,
    planning_confidence: float | None = None,
    confidence: float = 0.95,
    simulations: int = 2000,
    max_units: int = 20_000,
    seed: int = 0,
    widen: float | None = None,
) -> AssurancePlan:
    """The module docstring's plan from a calibration's per-unit tables (``engine``); units
    are independent units (groups, or items). Deterministic per ``seed``.
    ``planning_confidence``: the one-sided confidence of the planning kappa (default
    ``assurance``). ``widen``: the factor on the simulated margins (default
    :func:`gate_widening`)."""
    if not 0 < assurance < 1:
        raise ValueError(f"assurance must be in (0, 1), got {assurance}")
    gamma = assurance if planning_confidence is None else planning_confidence
    if not 0.5 <= gamma < 1:
        raise ValueError(f"planning_confidence must be in [0.5, 1), got {gamma}")
    g = engine.units
    kappa_l = engine_interval(engine, confidence=gamma, seed=seed).lower
    if not (math.isfinite(kappa_l) and kappa_l >= target):
        return AssurancePlan(None, 0.0, kappa_l, gamma, target, assurance, simulations)
    population, probs = population_at(engine, kappa_l)
    widen = gate_widening(engine, confidence, seed) if widen is None else widen

    def reach(m: int) -> float:
        # the same follow-up randomness for every m keeps the search monotone in practice
        rng = np.random.default_rng(seed + 1)
        return _reach(population, probs, g, m, target, confidence, rng, simulations, widen)

    # the calibrated units alone are no plan: the caller plans because their bound fell short
    low, high = g, 2 * g
    while reach(high) < assurance:
        low, high = high, high * 2
        if high > max_units:
            p = reach(max_units)
            if p < assurance:
                return AssurancePlan(None, p, kappa_l, gamma, target, assurance, simulations)
            high = max_units
            break
    while high - low > max(1, math.ceil(0.01 * high)):  # 1% resolution
        mid = (low + high) // 2
        low, high = (low, mid) if reach(mid) >= assurance else (mid, high)
    return AssurancePlan(high, reach(high), kappa_l, gamma, target, assurance, simulations)
