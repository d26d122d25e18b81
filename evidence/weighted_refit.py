"""Does "weighting helps" keep its error rate (issue 23, part 8)?

Exchangeable judges (every judge equally good, so weighting cannot truly help) on

- an ordinal 1-5 dimension with Lend an Ear's level mix, two judges (the weighted median of
  two is the heavier judge's rating, the equal one their midpoint: where fitted weights
  matter most; with three judges they rarely change the median);
- a binary dimension with 70% "yes", two judges right 80% of the time each (their equal vote
  ties whenever they disagree);
- a ranked dimension of RESCUE's shape (two clients, listed in the session's order, and the
  group label "Couple"; gold 50/30/20%; top-2 lists), two or three judges that put the gold
  first 60% of the time and otherwise list a random order (two judges' equal Borda count ties
  whenever their first choices differ and each ranks the other's first choice second), scored
  by chance-corrected Recall@1 with the column's own habit; and, for power, two judges right
  90% and 30% of the time (weighting truly helps).

Per setting, ``--reps`` calibrations; on each, ``judge.reliability.compare_weighted``
(2 folds x 5 repeats, ``--resamples`` bootstrap resamples) says "weighting helps" when its
one-sided p-value is below 0.025 (one dimension: Holm changes nothing). Compared: the
interval that refits the weights in every resample (the rule), the one that holds the fitted
weights fixed (today's), and on the binary dimension the panel's tie rule (a tie goes to the
first label) against ties split evenly.

    uv run --group dev python -m evidence.weighted_refit [--reps 500] [--resamples 500] [--seed 9]
        [--repeats 5] [--estimate-repeats R] [--rule-only] [--only ranked]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from evidence._ordinal_model import LEND_AN_EAR_SHARES
from judge.reliability._ranked_refit import RankedDesign, ranked_design
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


def ranked_calibration(
    rng: np.random.Generator, n: int, right: Sequence[float] = (0.6, 0.6)
) -> RankedDesign:
    candidates = [[f"s{i}-a", f"s{i}-b", "Couple"] for i in range(n)]
    gold = [c[int(rng.choice(3, p=[0.5, 0.3, 0.2]))] for c in candidates]
    rankings = []
    for c, g in zip(candidates, gold, strict=True):
        row = []
        for skill in right:
            order = [str(x) for x in rng.permutation(c)]
            if rng.random() < skill:
                order.remove(g)
                order.insert(0, g)
            row.append(order[:2])
        rankings.append(row)
    return ranked_design(rankings, gold, candidates, k=2, shared={"Couple"})


SETTINGS: dict[str, tuple[Callable[[np.random.Generator, int], Design | RankedDesign], int]] = {
    "ordinal 1-5, 2 judges, n=50": (ordinal_calibration, 50),
    "ordinal 1-5, 2 judges, n=100": (ordinal_calibration, 100),
    "binary 70% yes, 2 judges, n=100": (binary_calibration, 100),
    "ranked 2 clients + Couple, 2 judges, n=50": (ranked_calibration, 50),
    "ranked 2 clients + Couple, 2 judges, n=100": (ranked_calibration, 100),
    "ranked 2 clients + Couple, 3 judges, n=100": (
        lambda rng, n: ranked_calibration(rng, n, (0.6, 0.6, 0.6)),
        100,
    ),
    # not exchangeable: power, where weighting does help
    "ranked power: judges 90% and 30%, n=100": (
        lambda rng, n: ranked_calibration(rng, n, (0.9, 0.3)),
        100,
    ),
    "ranked power: judges 75% and 50%, n=100": (
        lambda rng, n: ranked_calibration(rng, n, (0.75, 0.5)),
        100,
    ),
    "ranked 2 clients + Couple, 2 judges, n=400": (ranked_calibration, 400),
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
    parser.add_argument("--only", default="", help="only the settings whose name contains this")
    args = parser.parse_args(argv)
    print(
        f"share of calibrations saying 'weighting helps' (one-sided p < {ALPHA}); "
        f"{args.reps} calibrations per setting, {args.resamples} resamples, "
        f"{args.repeats} CV repeats per resample ({args.estimate_repeats or args.repeats} for the "
        f"estimate), seed {args.seed}; "
        f"Monte Carlo SE of a 2.5% rate {math.sqrt(0.025 * 0.975 / args.reps):.4f}"
    )
    for i, (name, (draw, n)) in enumerate(SETTINGS.items()):
        if args.only not in name:
            continue
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
                first = "first-label" in variant and isinstance(d, Design)
                case = replace(d, ties="first") if first else d
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
