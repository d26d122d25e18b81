"""Does "weighting helps" keep its error rate (issue 23, part 8)?

Exchangeable judges (every judge equally good, so weighting cannot truly help) on

- an ordinal 1-5 dimension with Lend an Ear's level mix, two judges (the weighted median of
  two is the heavier judge's rating, the equal one their midpoint: where fitted weights
  matter most; with three judges they rarely change the median);
- a binary dimension with 70% "yes", two judges right 80% of the time each (their equal vote
  ties whenever they disagree).

Per setting, ``--reps`` calibrations; on each, ``judge.reliability.compare_weighted``
(2 folds x 5 repeats, ``--resamples`` bootstrap resamples) says "weighting helps" when its
one-sided p-value is below 0.025 (one dimension: Holm changes nothing). Compared: the
interval that refits the weights in every resample (the rule), the one that holds the fitted
weights fixed (today's), and on the binary dimension the panel's tie rule (a tie goes to the
first label) against ties split evenly.

    uv run --group dev python -m evidence.weighted_refit [--reps 500] [--resamples 500] [--seed 9]
        [--repeats 5] [--estimate-repeats R] [--rule-only]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from evidence._ordinal_model import LEND_AN_EAR_SHARES
from judge.reliability._weighted_refit import ALPHA, Design, aggregation_design, compare_weighted


def ordinal_calibration(rng: np.random.Generator, n: int, judges: int = 2) -> Design:
    from scipy.special import ndtri

    z = rng.normal(0, 1, n)
    cuts = ndtri(np.cumsum(LEND_AN_EAR_SHARES)[:-1]) * math.sqrt(1 + 0.6**2)
    gold = np.searchsorted(cuts, z + rng.normal(0, 0.6, n))
    answers = np.searchsorted(cuts, z[:, None] + rng.normal(0, 0.8, (n, judges)))
    return aggregation_design(answers.tolist(), gold.tolist(), kind="ordinal", k=5)


def binary_calibration(rng: np.random.Generator, n: int, yes: float = 0.7) -> Design:
    gold = (rng.random(n) < yes).astype(np.int64)
    right = rng.random((n, 2)) < 0.8
    answers = np.where(right, gold[:, None], 1 - gold[:, None])
    return aggregation_design(answers.tolist(), gold.tolist(), kind="labels", k=2)


SETTINGS = {
    "ordinal 1-5, 2 judges, n=50": (ordinal_calibration, 50),
    "ordinal 1-5, 2 judges, n=100": (ordinal_calibration, 100),
    "binary 70% yes, 2 judges, n=100": (binary_calibration, 100),
}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=500)
    parser.add_argument("--resamples", type=int, default=500)
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--repeats", type=int, default=5, help="CV repeats (the service: 2)")
    parser.add_argument(
        "--estimate-repeats", type=int, default=None, help="CV repeats of the estimate (10)"
    )
    parser.add_argument("--rule-only", action="store_true", help="only the rule's variant")
    args = parser.parse_args(argv)
    print(
        f"share of calibrations saying 'weighting helps' (one-sided p < {ALPHA}); "
        f"{args.reps} calibrations per setting, {args.resamples} resamples, "
        f"{args.repeats} CV repeats per resample ({args.estimate_repeats or args.repeats} for the "
        f"estimate), seed {args.seed}; "
        f"Monte Carlo SE of a 2.5% rate {math.sqrt(0.025 * 0.975 / args.reps):.4f}"
    )
    for i, (name, (draw, n)) in enumerate(SETTINGS.items()):
        start = time.perf_counter()
        rng = np.random.default_rng([args.seed, i])
        variants = {"refit, ties split": 0}
        if not args.rule_only:
            variants["fixed weights, ties split"] = 0
        if name.startswith("binary") and not args.rule_only:
            variants |= {"refit, first-label ties": 0, "fixed weights, first-label ties": 0}
        for rep in range(args.reps):
            d = draw(rng, n)
            for variant in variants:
                case = replace(d, ties="first") if "first-label" in variant else d
                result = compare_weighted(
                    case,
                    n_resamples=args.resamples,
                    repeats=args.repeats,
                    estimate_repeats=args.estimate_repeats,
                    seed=rep,
                    refit=variant.startswith("refit"),
                )
                variants[variant] += int(result.p_value < ALPHA)
        took = time.perf_counter() - start
        for variant, count in variants.items():
            print(f"{name:34s} {variant:32s} {count / args.reps:6.3f}")
        print(f"  ({took:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
