"""Coverage of kappa's bootstrap intervals with few clusters (issue 23, part 1).

A judge against the expert consensus on clustered ordinal data (``evidence._ordinal_model``:
5 levels, intra-cluster correlation of the latent value ``icc`` and of the judge's error
``judge_icc``, population quadratic kappa about 0.61). Per setting, ``--reps`` calibrations
are drawn; on each, every method's interval is computed on the *same* resamples:
percentile, BCa and studentized cluster bootstrap, the cluster jackknife-t, their union
(``robust``: the lower of the jackknife-t and percentile bounds, the gate's), and (reference)
the percentile bootstrap that ignores the clusters. Reported: two-sided 95% coverage, the
share of calibrations where the truth lies below the two-sided interval's low end (the gate
reads that end; nominal 2.5%) and below the one-sided 95% lower bound (nominal 5%), and the
mean width.

    uv run --dev python -m evidence.cluster_coverage [--reps 1000] [--resamples 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evidence._ordinal_model import OrdinalModel, cluster_sizes
from judge.reliability._cluster_kappa import cluster_kappa
from judge.reliability._kappa_interval import (
    bca_bounds,
    jackknife_t_bounds,
    percentile_bounds,
    studentized_bounds,
    tail_levels,
)
from judge.reliability._resample import group_draws

METHODS = (
    "robust",
    "percentile",
    "bca",
    "studentized",
    "jackknife_t",
    "percentile_ignoring_clusters",
)


@dataclass(frozen=True)
class Setting:
    label: str
    clusters: int  # independent units
    size_low: int  # items per cluster, uniform low..high (1..1: independent items)
    size_high: int


SETTINGS = (
    *(Setting(f"{g} clusters", g, 5, 15) for g in (5, 8, 12, 20, 40)),
    *(Setting(f"{n} independent items", n, 1, 1) for n in (30, 50, 100, 200)),
)


@dataclass
class Tally:
    covered: int = 0
    below_low: int = 0  # truth < two-sided low end
    above_high: int = 0
    below_lower: int = 0  # truth < one-sided lower bound
    width: float = 0.0
    runs: int = 0

    def add(self, truth: float, low: float, high: float, lower: float) -> None:
        self.runs += 1
        self.covered += int(low <= truth <= high)
        self.below_low += int(truth < low)
        self.above_high += int(truth > high)
        self.below_lower += int(truth < lower)
        self.width += high - low

    def row(self) -> dict[str, float]:
        r = max(self.runs, 1)
        return {
            "coverage": self.covered / r,
            "miss_low": self.below_low / r,
            "miss_high": self.above_high / r,
            "miss_lower_one_sided": self.below_lower / r,
            "width": self.width / r,
            "runs": self.runs,
        }


def simulate(
    setting: Setting,
    model: OrdinalModel,
    truth: float,
    *,
    reps: int,
    resamples: int,
    seed: int,
) -> dict[str, dict[str, float]]:
    rng = np.random.default_rng(seed)
    levels = tail_levels(0.95)
    tallies = {m: Tally() for m in METHODS}
    for rep in range(reps):
        sizes = cluster_sizes(rng, setting.clusters, setting.size_low, setting.size_high)
        judge, expert, cluster = model.draw(rng, sizes)
        engine = cluster_kappa(
            judge.tolist(), expert.tolist(), model.levels, "quadratic", cluster.tolist()
        )
        estimate = engine.point()
        if not math.isfinite(estimate):
            continue
        boot, boot_se = [], []
        for draws in group_draws(engine.units, resamples, seed * 100_003 + rep):
            boot.append(engine.resampled(draws))
            boot_se.append(engine.std_err(draws))
        b, bse = np.concatenate(boot), np.concatenate(boot_se)
        jack = engine.jackknife()
        se = float(engine.std_err()[0])
        bounds = {
            "percentile": percentile_bounds(b, levels),
            "bca": bca_bounds(estimate, b, jack, levels),
            "studentized": studentized_bounds(estimate, se, b, bse, levels),
            "jackknife_t": jackknife_t_bounds(estimate, jack, levels),
        }
        jk, pc = bounds["jackknife_t"], bounds["percentile"]
        bounds["robust"] = np.array([min(jk[0], pc[0]), max(jk[1], pc[1]), min(jk[2], pc[2])])
        flat = cluster_kappa(judge.tolist(), expert.tolist(), model.levels, "quadratic")
        flat_boot = np.concatenate(
            [flat.resampled(d) for d in group_draws(flat.units, resamples, seed + rep)]
        )
        bounds["percentile_ignoring_clusters"] = percentile_bounds(flat_boot, levels)
        for method, (low, high, lower) in bounds.items():
            low, high, lower = (float(np.clip(x, -1, 1)) for x in (low, high, lower))
            tallies[method].add(truth, low, high, lower)
    return {m: t.row() for m, t in tallies.items()}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--icc", type=float, default=0.3)
    parser.add_argument("--judge-icc", type=float, default=0.3)
    args = parser.parse_args(argv)
    model = OrdinalModel(judge_noise=0.8, expert_noise=0.6, icc=args.icc, judge_icc=args.judge_icc)
    truth = model.population_kappa()
    mc = math.sqrt(0.95 * 0.05 / args.reps)
    print(
        f"population quadratic kappa {truth:.4f}; icc {args.icc}, judge error icc "
        f"{args.judge_icc}; {args.reps} calibrations per setting, {args.resamples} resamples, "
        f"seed {args.seed}; Monte Carlo SE of a 95% coverage: {mc:.4f}"
    )
    print(
        f"{'setting':24s} {'method':30s} {'cover':>6s} {'<low':>6s} {'>high':>6s} "
        f"{'<lower1s':>8s} {'width':>6s}"
    )
    for i, setting in enumerate(SETTINGS):
        start = time.perf_counter()
        rows = simulate(
            setting,
            model,
            truth,
            reps=args.reps,
            resamples=args.resamples,
            seed=args.seed * 1000 + i,
        )
        for method, r in rows.items():
            if setting.size_high == 1 and method == "percentile_ignoring_clusters":
                continue
            print(
                f"{setting.label:24s} {method:30s} {r['coverage']:6.3f} {r['miss_low']:6.3f} "
                f"{r['miss_high']:6.3f} {r['miss_lower_one_sided']:8.3f} {r['width']:6.3f}"
            )
        print(f"  ({time.perf_counter() - start:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
