"""Does following the plan reach the target as often as it says (issue 23, part 9)?

A judge against the expert consensus on independent items of a 5-level scale
(``evidence._ordinal_model.OrdinalModel``, equally likely levels). The plan's 80% is an
average over the estimate's uncertainty, so it is checked where the truth varies the way the
estimate's uncertainty says it might: a judge whose noise is drawn per calibration from a
range (population kappa 0.50-0.75, "prior"); fixed truths are shown too (there the share
depends on where the truth lies relative to the target). Per scenario, ``--reps`` calibrations of
``--n`` items; on each:

- a calibration whose gate bound (one-sided 95%, robust: the lower of jackknife-t and
  percentile) already reaches the target needs no plan ("cleared already");
- otherwise the assurance plan (``judge.reliability.units_for_assurance``, assurance 0.8,
  target ``--target``, 2,000 simulations, sized at the calibration's lower bound at
  ``--planning-confidence``, default the assurance): m items in all, or none when that bound
  is below the target ("unreachable"); the follow-up it asks for is the
  calibration's own items plus ``m - n`` new ones from the same population, and the gate's
  bound is computed on all of them (robust, 1,000 resamples): does it reach the target?
- today's point projection (``judge.reliability.units_needed`` from the 95% percentile
  bootstrap CI's lower end): m' items, and the follow-up's percentile lower end (500
  resamples) against the target.

Reported per scenario and plan: the share of calibrations with a plan, the share of
follow-ups that reached the target (among those with a plan), and the median and 90th
percentile of the items asked for.

    uv run --group dev python -m evidence.planning_assurance [--reps 300] [--n 50] [--target 0.58]
        [--no-projection] [--planning-confidence 0.8] [--scenarios 0 1 2 3]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence

import numpy as np

from evidence._ordinal_model import IntArray, OrdinalModel
from judge.reliability import bootstrap_kappa_ci, units_needed
from judge.reliability._assurance import units_for_assurance
from judge.reliability._cluster_kappa import cluster_kappa
from judge.reliability._kappa_interval import engine_interval

#: judge noise of each scenario: fixed (a population kappa of about 0.70, 0.65, 0.60), or None
#: for a judge whose noise is drawn per calibration uniformly from ``PRIOR`` (kappa 0.75-0.50)
SCENARIOS: tuple[float | None, ...] = (None, 0.55, 0.7, 0.85)
PRIOR = (0.4, 1.1)
CAP = 5000


def follow_up_new(
    model: OrdinalModel,
    rng: np.random.Generator,
    m: int,
    pilot: tuple[IntArray, IntArray],
    seed: int,
) -> float:
    """The gate's one-sided 95% bound (robust: the lower of jackknife-t and percentile) on
    the follow-up the plan asks for: the pilot's items plus ``m - n`` new ones."""
    judge, expert, _ = model.draw(rng, np.ones(max(m - len(pilot[0]), 0), dtype=np.int64))
    judge, expert = np.r_[pilot[0], judge], np.r_[pilot[1], expert]
    engine = cluster_kappa(judge.tolist(), expert.tolist(), model.levels, "quadratic")
    return engine_interval(engine, method="robust", n_resamples=1000, seed=seed).lower


def follow_up_today(model: OrdinalModel, rng: np.random.Generator, m: int, seed: int) -> float:
    judge, expert, _ = model.draw(rng, np.ones(m, dtype=np.int64))
    low, _ = bootstrap_kappa_ci(
        judge.tolist(),
        expert.tolist(),
        levels=list(range(model.levels)),
        n_resamples=500,
        seed=seed,
    )
    return low


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=300)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--target", type=float, default=0.58)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--assurance", type=float, default=0.8)
    parser.add_argument(
        "--prior", type=float, nargs=2, default=list(PRIOR), help="judge noise range (prior)"
    )
    parser.add_argument(
        "--scenarios", type=int, nargs="*", help="indices into SCENARIOS (default: all)"
    )
    parser.add_argument(
        "--no-projection", action="store_true", help="only the assurance plan (faster)"
    )
    parser.add_argument(
        "--planning-confidence",
        type=float,
        default=None,
        help="one-sided confidence of the planning kappa (default: the assurance)",
    )
    parser.add_argument(
        "--no-widening",
        action="store_true",
        help="plan for the linearised t bound (widen 1.0), not the gate's robust bound",
    )
    args = parser.parse_args(argv)
    print(
        f"calibrations of {args.n} items, target {args.target}, assurance {args.assurance}, "
        f"{args.reps} "
        f"calibrations per scenario, seed {args.seed}; follow-ups capped at {CAP} items"
    )
    for s, noise in enumerate(SCENARIOS):
        if args.scenarios and s not in args.scenarios:
            continue
        start = time.perf_counter()
        rng = np.random.default_rng([args.seed, s])
        fixed = OrdinalModel(judge_noise=noise or 0.0, expert_noise=0.6, icc=0.0, judge_icc=0.0)
        label = f"kappa {fixed.population_kappa():.3f}" if noise else f"prior {args.prior}"
        name_a = f"assurance {args.assurance}"
        plans: dict[str, list[tuple[int, bool]]] = {name_a: [], "point projection": []}
        none = dict.fromkeys(plans, 0)
        cleared = 0
        for rep in range(args.reps):
            model = (
                fixed
                if noise
                else OrdinalModel(
                    judge_noise=float(rng.uniform(*args.prior)),
                    expert_noise=0.6,
                    icc=0.0,
                    judge_icc=0.0,
                )
            )
            judge, expert, _ = model.draw(rng, np.ones(args.n, dtype=np.int64))
            engine = cluster_kappa(judge.tolist(), expert.tolist(), model.levels, "quadratic")
            if engine_interval(engine, n_resamples=1000, seed=rep).lower >= args.target:
                cleared += 1  # the gate's bound already reaches the target: no plan needed
                continue
            plan = units_for_assurance(
                engine,
                args.target,
                assurance=args.assurance,
                planning_confidence=args.planning_confidence,
                max_units=CAP,
                seed=rep,
                widen=1.0 if args.no_widening else None,
            )
            if plan.units is None:
                none[name_a] += 1
            else:
                m = max(plan.units, args.n)
                reached = follow_up_new(model, rng, m, (judge, expert), rep) >= args.target
                plans[name_a].append((m, reached))
            if args.no_projection:
                continue
            low, _ = bootstrap_kappa_ci(
                judge.tolist(),
                expert.tolist(),
                levels=list(range(model.levels)),
                n_resamples=500,
                seed=rep,
            )
            point = engine.point()
            need = units_needed(point, low, args.n, args.target) if math.isfinite(low) else None
            if need is None or need > CAP:
                none["point projection"] += 1
            else:
                ok = follow_up_today(model, rng, max(need, 2), rep) >= args.target
                plans["point projection"].append((need, ok))
        for name, rows in plans.items():
            if args.no_projection and name == "point projection":
                continue
            sizes = np.array([m for m, _ in rows]) if rows else np.array([0])
            reached = np.mean([ok for _, ok in rows]) if rows else math.nan
            print(
                f"{label:13s} {name:17s} plan given {len(rows) / args.reps:5.3f}  "
                f"reached {reached:5.3f} (of {len(rows)})  items: median "
                f"{np.median(sizes):.0f}, 90th percentile {np.quantile(sizes, 0.9):.0f}"
            )
        print(
            f"  cleared already {cleared / args.reps:.3f}; ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
