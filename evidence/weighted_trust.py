"""How often does a reliability-weighted score's flag say "trusted" (issue 23, part 8)?

SIMULATED judges and experts. Three experts and a panel of two or three judges rate
independent items on a 1-5 scale with Lend an Ear's level mix (latent ``z ~ N(0, 1)``, each
rater cuts ``z`` plus its own normal noise; experts' noise 0.72, so two experts agree at the
line, 0.58, as in ``evidence.trust_error_rate``). The equal aggregate is the judges' median
(a midpoint for two judges); the weighted one is the service's cross-validated weighted median
(``judge.reliability.compare_weighted``: weights ``max(kappa_j, 0)`` fit on the other fold,
1,000 refit resamples, 10 splits for the estimate). With two judges the weighted median is
whichever judge weighs more, so it is *worse* than their midpoint: the case where the weighted
score's own flag matters.

Per calibration, the weighted score's flag (``judge.domain.flags.weighted_view``) is computed
by two rules:

- ``consensus`` (phase 4's rule): the equal aggregate's like-for-like test passes (one-sided
  95% robust bound of its mean kappa against single experts >= the line) and the weighted
  aggregate's kappa against the experts' *median* has its refit interval's lower end (2.5%)
  at or above the line;
- ``like-for-like`` (the rule now): the equal aggregate's test passes and the weighted
  aggregate's mean kappa against *single* experts has its one-sided 95% refit bound at or
  above the line.

Also reported: the like-for-like bound of the weighted aggregate alone, the share of
calibrations whose consensus levels all hold 5 units (the level minimum, which both rules add),
and the population kappas (one calibration of 40,000 items): each judge's, the equal and the
weighted aggregate's against a single expert, and the weighted one's against the median.

    uv run --group dev python -m evidence.weighted_trust [--reps 1000] [--seed 51]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evidence._ordinal_model import ExpertPanelModel, panel_noise_for
from judge.reliability import like_for_like_trust
from judge.reliability._levels import MIN_UNITS_PER_LEVEL, check_levels
from judge.reliability._weighted_refit import (
    Design,
    aggregation_design,
    compare_weighted,
    cv_difference,
)

LINE = 0.58
EXPERT_NOISE = 0.72
LEVELS = [0.0, 1.0, 2.0, 3.0, 4.0]
RULES = ("equal_test", "weighted_lfl_alone", "consensus", "like_for_like", "levels_ok")
#: (name, each judge's population kappa against a single expert)
SCENARIOS: dict[str, tuple[float, ...]] = {
    "two judges at the line": (0.582, 0.582),
    "two judges below the line": (0.55, 0.55),
    "three judges": (0.55, 0.55, 0.55),
    "two unequal judges": (0.66, 0.45),
    "three good judges": (0.66, 0.66, 0.66),
}


@dataclass(frozen=True)
class Panel:
    """Experts and judges on one latent scale (see the module docstring)."""

    judge_noise: tuple[float, ...]
    experts: int = 3

    def draw(self, rng: np.random.Generator, n: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """(judges x n codes, experts x n codes)."""
        cuts = ExpertPanelModel(1.0, EXPERT_NOISE).cuts()
        z = rng.normal(0, 1, n)
        experts = np.searchsorted(cuts, z + rng.normal(0, EXPERT_NOISE, (self.experts, n)))
        noise = np.asarray(self.judge_noise)[:, None]
        judges = np.searchsorted(cuts, z + noise * rng.normal(0, 1, (len(self.judge_noise), n)))
        return judges.astype(np.int64), experts.astype(np.int64)


def _design(judges: NDArray[np.int64], experts: NDArray[np.int64]) -> Design:
    consensus = np.median(experts, axis=0)
    return aggregation_design(
        judges.T.tolist(), consensus.tolist(), kind="ordinal", k=5, experts=experts.T.tolist()
    )


def population(panel: Panel, n: int = 40_000) -> dict[str, float]:
    """Population kappas, from one large calibration (weights fit out of fold)."""
    from judge.reliability import scale_kappa

    rng = np.random.default_rng(7)
    judges, experts = panel.draw(rng, n)
    d = _design(judges, experts)
    diff, equal, single = cv_difference(
        d,
        np.ones((1, n)),
        folds=2,
        repeats=1,
        rng=rng,
    )
    median = np.median(judges, axis=0)
    return {
        "judge": float(
            np.mean([scale_kappa(j.tolist(), experts[0].tolist(), LEVELS) for j in judges])
        ),
        "equal": float(
            np.mean([scale_kappa(median.tolist(), e.tolist(), LEVELS) for e in experts])
        ),
        "weighted": float(single[0]),
        "weighted_median": float(diff[0] + equal[0]),
    }


def one_calibration(
    rng: np.random.Generator,
    panel: Panel,
    n: int,
    resamples: int,
    seed: int,
    refit_resamples: int = 1000,
) -> dict[str, bool]:
    judges, experts = panel.draw(rng, n)
    equal = np.median(judges, axis=0).astype(float).tolist()
    decision = like_for_like_trust(
        equal,
        {f"e{i}": e.astype(float).tolist() for i, e in enumerate(experts)},
        line=LINE,
        levels=LEVELS,
        n_resamples=resamples,
        seed=seed,
    )
    equal_test = not set(decision.reasons) - {"levels_below_minimum_units"}
    result = compare_weighted(
        _design(judges, experts),
        folds=2,
        repeats=1,
        estimate_repeats=10,
        n_resamples=refit_resamples,
        seed=seed,
    )
    consensus = np.median(experts, axis=0).tolist()
    weighted_lfl = math.isfinite(result.single_expert_lower) and result.single_expert_lower >= LINE
    return {
        "equal_test": equal_test,
        "weighted_lfl_alone": weighted_lfl,
        "consensus": equal_test and result.weighted >= LINE and result.weighted_ci[0] >= LINE,
        "like_for_like": equal_test and weighted_lfl,
        "levels_ok": check_levels(consensus, None, (), MIN_UNITS_PER_LEVEL).passes,
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--resamples", type=int, default=2000, help="of the equal test")
    parser.add_argument("--refit-resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=51)
    parser.add_argument("--sizes", type=int, nargs="*", default=[50, 100, 200])
    parser.add_argument("--scenarios", nargs="*", default=list(SCENARIOS))
    args = parser.parse_args(argv)
    print(
        f"SIMULATED; line {LINE}; {args.reps} calibrations per cell, seed {args.seed}, "
        f"{args.resamples} / {args.refit_resamples} resamples (equal test / refit); "
        f"MC SE of a 5% rate {math.sqrt(0.05 * 0.95 / args.reps):.4f}"
    )
    print(f"{'scenario':28s} {'n':>4s} " + " ".join(f"{r:>18s}" for r in RULES))
    for s, name in enumerate(args.scenarios):
        panel = Panel(tuple(panel_noise_for(k, EXPERT_NOISE) for k in SCENARIOS[name]))
        pop = population(panel)
        print(f"{name}: population " + ", ".join(f"{k} {v:.3f}" for k, v in pop.items()))
        for n in args.sizes:
            start = time.perf_counter()
            rng = np.random.default_rng([args.seed, s, n])
            counts = dict.fromkeys(RULES, 0)
            for rep in range(args.reps):
                for rule, ok in one_calibration(
                    rng, panel, n, args.resamples, rep, args.refit_resamples
                ).items():
                    counts[rule] += int(ok)
            shares = " ".join(f"{counts[r] / args.reps:18.3f}" for r in RULES)
            took = time.perf_counter() - start
            print(f"{name:28s} {n:4d} {shares}   ({took:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
