"""How often does the AC2 test trust a panel under kappa's prevalence paradox (issue 23, 4)?

Three experts and a panel rate independent items on a 1-5 scale where level 1 holds 85% of
the experts' ratings (``SHARES``; ``evidence._ordinal_model.ExpertPanelModel``, expert noise
0.72). The panel's noise is a multiple of the experts': at 1.0 the panel is a fourth expert,
exchangeable with them, so the AC2 difference D (mean AC2 of the panel against each single
expert minus the experts' mean pairwise AC2) is 0 in the population: the boundary of the
test's null hypothesis D < 0. Above 1.0 the panel is worse than an expert (D < 0), below 1.0
better. Per (noise, n), ``--reps`` calibrations, each through the gate's functions:

- ``ac2 test``: ``ac2_versus_experts``: D above the ``--confidence`` (default the gate's
  0.95) quantile of its permutation distribution, outside its Monte Carlo error, and the
  like-for-like kappa's lower bound > 0 (the rule's guard);
- ``paradox``: the share of calibrations where the paradox applied (the most frequent whole
  consensus level above 80% of the items), so the AC2 test, not kappa's, decided;
- ``whole rule``: what ``judge.calibration._trust_gate`` decides: under the paradox the AC2
  test, else kappa's line test, plus the level minimum (5 units per level present);
- ``kappa line``: kappa's like-for-like line test alone (lower bound >= 0.58), for reference;
- ``99% bootstrap``: the rule before (D's robust one-sided 99% bootstrap bound >= 0, outside
  its Monte Carlo error, with the same guard).

Requirement: at D = 0 (noise 1.0, the panel no better than an expert) the AC2 test trusts at
most 5% of calibrations.

    uv run --group dev python -m evidence.prevalence_trust [--reps 1000] [--seed 31]
        [--noises 1.0] [--sizes 50 100]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np

from evidence._ordinal_model import ExpertPanelModel
from judge.reliability import (
    AC2_CONFIDENCE,
    MIN_UNITS_PER_LEVEL,
    ac2_reasons,
    ac2_versus_experts,
    check_levels,
    dominant_level,
    like_for_like_trust,
    median_rater,
)
from judge.reliability._kappa_interval import engine_interval
from judge.reliability._prevalence_trust import ac2_difference

LINE = 0.58
EXPERT_NOISE = 0.72
SHARES = (0.85, 0.06, 0.04, 0.03, 0.02)
LEVELS = [1.0, 2.0, 3.0, 4.0, 5.0]
NOISES = (0.7, 1.0, 1.3)
SIZES = (50, 100, 200, 400)
COLUMNS = ("ac2 test", "paradox", "whole rule", "kappa line", "99% bootstrap")
#: the rule before the permutation test: D's robust one-sided 99% bootstrap bound >= 0
BOOTSTRAP_CONFIDENCE = 0.99


def one_calibration(
    rng: np.random.Generator,
    model: ExpertPanelModel,
    n: int,
    resamples: int,
    seed: int,
    confidence: float = AC2_CONFIDENCE,
) -> dict[str, bool]:
    panel_codes, expert_codes = model.draw(rng, n)
    panel = (panel_codes + 1).astype(float).tolist()
    experts = {f"e{j}": (row + 1).astype(float).tolist() for j, row in enumerate(expert_codes)}
    consensus = median_rater(*experts.values())
    kappa = like_for_like_trust(
        panel,
        experts,
        line=LINE,
        levels=LEVELS,
        n_resamples=resamples,
        seed=seed,
        min_units_per_level=0,
    )
    prevalence = dominant_level(consensus)
    paradox = prevalence is not None and prevalence.paradox
    guard = kappa.interval.refused is None and kappa.interval.lower > 0
    ac2 = ac2_versus_experts(
        panel,
        experts,
        levels=LEVELS,
        n_resamples=resamples,
        seed=seed,
        confidence=confidence,
    )
    before = engine_interval(
        ac2_difference(panel, list(experts.values()), levels=LEVELS),
        n_resamples=resamples,
        confidence=BOOTSTRAP_CONFIDENCE,
        seed=seed,
    )
    ac2_pass = guard and ac2.refused is None and not ac2_reasons(ac2)
    line_pass = kappa.interval.refused is None and not {
        "lower_bound_below_line",
        "lower_bound_within_monte_carlo_error_of_line",
    } & set(kappa.reasons)
    levels_ok = check_levels(consensus, None, (), MIN_UNITS_PER_LEVEL).passes
    return {
        "ac2 test": ac2_pass,
        "paradox": paradox,
        "whole rule": levels_ok and (ac2_pass if paradox and guard else line_pass),
        "kappa line": line_pass,
        "99% bootstrap": guard and before.refused is None and not ac2_reasons(before),
    }


def population_ac2_difference(model: ExpertPanelModel) -> tuple[float, float]:
    """(D, the panel's kappa against a single expert) on one large draw."""
    rng = np.random.default_rng(7)
    panel, experts = model.draw(rng, 200_000)
    cols = {f"e{j}": (row + 1).astype(float).tolist() for j, row in enumerate(experts)}
    p = (panel + 1).astype(float).tolist()
    d = ac2_versus_experts(p, cols, levels=LEVELS, n_resamples=1, min_units=10**9)
    return d.estimate, model.population(200_000)["panel_single"]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--noises", type=float, nargs="*", default=list(NOISES))
    parser.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    parser.add_argument("--confidence", type=float, default=AC2_CONFIDENCE)
    args = parser.parse_args(argv)
    print(
        f"shares {SHARES}; {args.reps} calibrations per cell, {args.resamples} resamples, "
        f"seed {args.seed}, permutation test at {args.confidence}; "
        f"MC SE of a 5% rate: {math.sqrt(0.05 * 0.95 / args.reps):.4f}"
    )
    print(
        f"{'noise':>5s} {'D':>7s} {'kappa':>6s} {'n':>4s} " + " ".join(f"{c:>10s}" for c in COLUMNS)
    )
    for i, ratio in enumerate(args.noises):
        model = ExpertPanelModel(EXPERT_NOISE * ratio, EXPERT_NOISE, shares=SHARES)
        d, kappa = population_ac2_difference(model)
        for n in args.sizes:
            rng = np.random.default_rng([args.seed, i, n])
            counts = dict.fromkeys(COLUMNS, 0)
            for rep in range(args.reps):
                found = one_calibration(rng, model, n, args.resamples, rep, args.confidence)
                for name, hit in found.items():
                    counts[name] += hit
            shares = " ".join(f"{counts[c] / args.reps:>10.1%}" for c in COLUMNS)
            print(f"{ratio:>5.2f} {d:>+7.3f} {kappa:>6.3f} {n:>4d} {shares}", flush=True)


if __name__ == "__main__":
    main()
