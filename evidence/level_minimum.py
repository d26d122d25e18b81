"""How many independent units does a consensus level need (issue 23, part 3)?

A level's contribution to kappa is how well the judge separates it from the other levels: its
category kappa (Cohen's kappa of "consensus is L" vs "judge says L"). With c units at the
level, in a calibration of ``--n`` independent items, the judge says L for a unit at L with
probability ``--sensitivity`` and for any other unit with probability ``--false-rate``. The
target is the category kappa of the expected table (the consensus counts held fixed). Per c,
``--reps`` calibrations: the two-sided 95% coverage of the category kappa's interval, and the
share of calibrations whose interval misses the target from above (the judge looks better
than it is) and from below, for the jackknife-t (with undefined resamples counted at -1) and
the percentile interval (undefined at -1), and their union (``robust``, the gate's).

The minimum is the smallest c from which the coverage of the chosen interval stays "near"
95% (at least 93%, and at most 4% missing from above) for every larger c in the grid.

    uv run --group dev python -m evidence.level_minimum [--n 50] [--reps 1000] [--seed 5]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence

import numpy as np

from judge.reliability._cluster_kappa import cluster_kappa
from judge.reliability._kappa_interval import (
    jackknife_t_bounds,
    percentile_bounds,
    tail_levels,
    undefined_cap,
)
from judge.reliability._resample import group_draws

COUNTS = (1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 15, 20)


def category_kappa(c: int, n: int, sensitivity: float, false_rate: float) -> float:
    """Cohen's kappa of the expected 2x2 table."""
    tp, fn = c * sensitivity, c * (1 - sensitivity)
    fp, tn = (n - c) * false_rate, (n - c) * (1 - false_rate)
    po = (tp + tn) / n
    pe = ((tp + fn) * (tp + fp) + (fp + tn) * (fn + tn)) / n**2
    return (po - pe) / (1 - pe)


def coverage(
    c: int, n: int, sensitivity: float, false_rate: float, reps: int, resamples: int, seed: int
) -> dict[str, tuple[float, float, float]]:
    truth = category_kappa(c, n, sensitivity, false_rate)
    rng = np.random.default_rng([seed, c])
    levels = tail_levels(0.95)
    gold = np.r_[np.ones(c, dtype=np.int64), np.zeros(n - c, dtype=np.int64)]
    tally = {m: [0, 0, 0] for m in ("jackknife_t", "percentile", "robust")}
    for rep in range(reps):
        says = np.where(gold == 1, rng.random(n) < sensitivity, rng.random(n) < false_rate)
        engine = cluster_kappa(says.astype(np.int64).tolist(), gold.tolist(), 2, None)
        estimate = engine.point()
        boot = np.concatenate(
            [engine.resampled(d) for d in group_draws(n, resamples, seed * 7919 + rep)]
        )
        undefined = int(np.sum(~np.isfinite(boot)))
        cap = undefined_cap(undefined, resamples, levels)
        bounds = {"percentile": percentile_bounds(boot, levels)}
        if math.isfinite(estimate):
            jk = jackknife_t_bounds(estimate, engine.jackknife(), levels)
            bounds["jackknife_t"] = np.where(cap, -1.0, jk)
        else:  # the judge never said L and the level... kappa undefined: no interval
            bounds["jackknife_t"] = np.array([-1.0, 1.0, -1.0])
        jk, pc = bounds["jackknife_t"], bounds["percentile"]
        bounds["robust"] = np.array([min(jk[0], pc[0]), max(jk[1], pc[1]), min(jk[2], pc[2])])
        for method, (low, high, _) in bounds.items():
            low, high = max(low, -1.0), min(high, 1.0)
            t = tally[method]
            t[0] += int(low <= truth <= high)
            t[1] += int(truth < low)  # the interval claims more than the truth
            t[2] += int(truth > high)
    return {m: (t[0] / reps, t[1] / reps, t[2] / reps) for m, t in tally.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--sensitivity", type=float, default=0.75)
    parser.add_argument("--false-rate", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args(argv)
    print(
        f"n {args.n} independent items; judge says L at L with p={args.sensitivity}, elsewhere "
        f"p={args.false_rate}; {args.reps} calibrations per count, {args.resamples} resamples, "
        f"seed {args.seed}; Monte Carlo SE of a 95% coverage {math.sqrt(0.0475 / args.reps):.4f}"
    )
    methods = ("jackknife_t", "percentile", "robust")
    print(
        f"{'c':>3s} {'kappa_L':>8s}  "
        + "   ".join(f"{m + ': cover >truth <truth':>31s}" for m in methods)
    )
    for c in COUNTS:
        rows = coverage(
            c, args.n, args.sensitivity, args.false_rate, args.reps, args.resamples, args.seed
        )
        truth = category_kappa(c, args.n, args.sensitivity, args.false_rate)
        cells = "   ".join(
            f"{'':12s}{rows[m][0]:6.3f} {rows[m][1]:6.3f} {rows[m][2]:6.3f}" for m in methods
        )
        print(f"{c:3d} {truth:8.3f}  {cells}", flush=True)


if __name__ == "__main__":
    main()
