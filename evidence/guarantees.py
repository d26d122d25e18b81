"""Item-level guarantees on real ratings (issue 27): conformal intervals, selective trust
and a cascade, on the Kumar et al. (2025) release with the three LLMs' recorded ratings
replayed (Gemini 2.5 Pro, GPT-4o, Claude 3.7 Sonnet; 3 experts; 50 conversations per
framework; 21 dimensions), over random calibration/test splits of each framework's items.

    uv run --dev python -m evidence.guarantees [--data ../shared/data] [--splits 500] [--cal 30]

Panel answer: the median of the three LLMs. Expert consensus: the median of the three
experts. Confidence: :func:`judge.reliability.ordinal_features` (range and modal agreement).
Cascade: stage 1 = Gemini 2.5 Pro + GPT-4o (the two cheapest per token; their median, a half
level when they differ by one), stage 2 = the third judge, Claude 3.7 Sonnet, added (the
three-judge median); unconfident items go to a person. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from evidence.kumar import Dimension, load
from judge.reliability import (
    agreement_within,
    cascade_cost,
    cascade_threshold,
    conformal_quantile,
    coverage_share_probability,
    fit_confidence_calibration,
    interval_covers,
    interval_widths,
    kept_by,
    mondrian_quantiles,
    mondrian_thresholds,
    ordinal_features,
    ordinal_intervals,
    ordinal_scores,
    route,
    selective_threshold,
)

CONFORMAL_ALPHA = 0.1  # intervals at level 0.9
TARGET = 0.8  # agreement on kept items: alpha = 0.2
DELTA = 0.1
WITHIN = (0, 1)  # agreement = exact match, or within one level, with the expert consensus
#: USD per million tokens, input and output: Gemini 2.5 Pro and GPT-4o from LiteLLM's price
#: map (1.110.2); Claude 3.7 Sonnet's list price (no longer in that map), as the Kumar
#: replay test configures it.
PRICES = {"gemini": (1.25, 10.0), "gpt": (2.5, 10.0), "claude": (3.0, 15.0)}
#: Tokens per call assumed the same for every model (one call rates every dimension of a
#: framework): the rubric and conversation in, ratings with short rationales out.
TOKENS_IN, TOKENS_OUT = 1500, 300


def call_cost(model: str) -> float:
    price_in, price_out = PRICES[model]
    return (price_in * TOKENS_IN + price_out * TOKENS_OUT) / 1e6


STAGE_CALLS = (2.0, 1.0)
STAGE_COSTS = (call_cost("gemini") + call_cost("gpt"), call_cost("claude"))


@dataclass
class Record:
    """Per dimension, one entry per split."""

    values: dict[str, list[Any]] = field(default_factory=lambda: defaultdict(list))

    def add(self, **kwargs: Any) -> None:
        for key, value in kwargs.items():
            self.values[key].append(value)

    def mean(self, key: str) -> float:
        vals = [v for v in self.values[key] if v is not None and not math.isnan(v)]
        return statistics.fmean(vals) if vals else math.nan

    def share(self, key: str) -> float:
        vals = [bool(v) for v in self.values[key] if v is not None]
        return sum(vals) / len(vals) if vals else math.nan


def splits(n: int, n_cal: int, count: int, seed: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    for s in range(count):
        order = np.random.default_rng([seed, s]).permutation(n)
        yield order[:n_cal], order[n_cal:]


def confidence(ratings: np.ndarray, dim: Dimension, k: int = 0) -> np.ndarray:
    """Range and modal agreement, judges within ``k`` levels counting as agreeing (k is the
    agreement criterion's tolerance, at most half the scale's span)."""
    tolerance = min(k, (dim.scale_max - dim.scale_min) // 2)
    return ordinal_features(ratings, dim.scale_min, dim.scale_max, tolerance=tolerance).confidence()


def conformal_split(dim: Dimension, cal: np.ndarray, test: np.ndarray, rec: Record) -> None:
    agg = np.median(dim.judges, axis=1)
    truth = dim.consensus
    scores = ordinal_scores(agg, truth)
    for name, delta in (("marg", None), ("pac", DELTA)):
        q = conformal_quantile(scores[cal], CONFORMAL_ALPHA, delta)
        low, high = ordinal_intervals(agg[test], q.value, dim.levels)
        cov = float(np.mean(interval_covers(low, high, truth[test])))
        rec.add(
            **{
                f"{name}_cov": cov,
                f"{name}_hit": cov >= 1 - CONFORMAL_ALPHA - 1e-9,
                f"{name}_width": float(np.nanmean(interval_widths(low, high))),
                f"{name}_few": q.status != "ok",
            }
        )
    # Mondrian by confidence bin: unanimous panel (spread 0) or not
    bins = np.where(np.ptp(dim.judges, axis=1) == 0, "unanimous", "split").tolist()
    quantiles = mondrian_quantiles(scores[cal], [bins[i] for i in cal], CONFORMAL_ALPHA)
    thresholds = mondrian_thresholds(quantiles, [bins[i] for i in test])
    low, high = ordinal_intervals(agg[test], 0.0, dim.levels)
    for j, t in enumerate(thresholds):
        lo, hi = ordinal_intervals(agg[test][j : j + 1], float(t), dim.levels)
        low[j], high[j] = lo[0], hi[0]
    covered = interval_covers(low, high, truth[test])
    rec.add(
        mond_cov=float(np.mean(covered)),
        mond_hit=float(np.mean(covered)) >= 1 - CONFORMAL_ALPHA - 1e-9,
        mond_width=float(np.nanmean(interval_widths(low, high))),
        mond_few=any(q.status != "ok" for q in quantiles.values()),
    )
    for b in ("unanimous", "split"):
        mask = np.array([bins[i] == b for i in test])
        rec.add(**{f"mond_cov_{b}": float(np.mean(covered[mask])) if mask.any() else None})
        rec.add(**{f"mond_n_{b}": int(mask.sum())})


def selective_split(
    dim: Dimension, cal: np.ndarray, test: np.ndarray, k: int, rec: Record
) -> np.ndarray:
    """Returns the kept mask on the test items."""
    agg = np.median(dim.judges, axis=1)
    conf = confidence(dim.judges, dim, k)
    agreed = agreement_within(agg, dim.consensus, k)
    result = selective_threshold(conf[cal], agreed[cal], 1 - TARGET, DELTA)
    kept = kept_by(conf[test], result.threshold)
    realised = float(np.mean(agreed[test][kept])) if kept.any() else None
    # the 50 items as the population: its agreement at the chosen threshold
    everyone = kept_by(conf, result.threshold)
    population = float(np.mean(agreed[everyone])) if everyone.any() else None
    calibration = fit_confidence_calibration(conf[cal], agreed[cal])
    predicted = calibration.predict(conf[test])
    base = float(np.mean(agreed[cal]))
    rec.add(
        **{
            f"sel{k}_status": result.status,
            f"sel{k}_threshold": result.threshold,
            f"sel{k}_coverage": float(np.mean(kept)),
            f"sel{k}_realised": realised,
            f"sel{k}_hit": None if realised is None else realised >= TARGET - 1e-9,
            f"sel{k}_violated": realised is not None and realised < TARGET - 1e-9,
            f"sel{k}_pop_violated": population is not None and population < TARGET - 1e-9,
            f"sel{k}_kept": int(kept.sum()),
            f"sel{k}_agree_kept": int(agreed[test][kept].sum()),
            f"sel{k}_all": float(np.mean(agreed[test])),
            f"brier{k}": float(np.mean((predicted - agreed[test]) ** 2)),
            f"brier{k}_base": float(np.mean((base - agreed[test]) ** 2)),
        }
    )
    return kept


def cascade_split(
    dim: Dimension, cal: np.ndarray, test: np.ndarray, k: int, rec: Record
) -> tuple[np.ndarray, bool]:
    """Returns the stage (0, 1, or 2 = person) of each test item, and whether the cascade
    has a guaranteed threshold."""
    pair = dim.judges[:, :2]  # gemini, gpt
    answers = np.column_stack([np.median(pair, axis=1), np.median(dim.judges, axis=1)])
    # the cheap stage's confidence counts exact agreement only: with a tolerance its
    # half-level answers (two judges one level apart) would reach the top of the path
    conf = np.column_stack([confidence(pair, dim, 0), confidence(dim.judges, dim, k)])
    agreed = np.column_stack([agreement_within(answers[:, s], dim.consensus, k) for s in (0, 1)])
    result = cascade_threshold(conf[cal], agreed[cal], 1 - TARGET, DELTA)
    stage = route(conf[test], result.thresholds)
    kept = stage < 2
    rows = np.arange(len(test))[kept]
    right = agreed[test][rows, stage[kept]]
    realised = float(np.mean(right)) if kept.any() else None
    cost = cascade_cost(stage, STAGE_CALLS, STAGE_COSTS)
    every_stage = route(conf, result.thresholds)
    answered = every_stage < 2
    population = (
        float(np.mean(agreed[np.arange(len(conf))[answered], every_stage[answered]]))
        if answered.any()
        else None
    )
    rec.add(
        **{
            f"cas{k}_status": result.status,
            f"cas{k}_coverage": float(np.mean(kept)),
            f"cas{k}_stage1": float(np.mean(stage == 0)),
            f"cas{k}_realised": realised,
            f"cas{k}_hit": None if realised is None else realised >= TARGET - 1e-9,
            f"cas{k}_violated": realised is not None and realised < TARGET - 1e-9,
            f"cas{k}_pop_violated": population is not None and population < TARGET - 1e-9,
            f"cas{k}_kept": int(kept.sum()),
            f"cas{k}_agree_kept": int(right.sum()),
            f"cas{k}_calls": cost.calls_per_item,
            f"cas{k}_cost": cost.cost_per_item,
        }
    )
    return stage, result.status == "guaranteed"


def wilson(successes: int, n: int) -> str:
    if n == 0:
        return "n=0"
    ci = stats.binomtest(successes, n).proportion_ci(0.95, method="wilson")
    return f"{successes / n:.3f} [{ci.low:.3f}, {ci.high:.3f}]"


def fmt(x: float, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def full_data_check(dim: Dimension, rec: Record, k: int) -> str:
    """Agreement of all 50 items kept at the most often chosen threshold (units: items)."""
    chosen = [t for t in rec.values[f"sel{k}_threshold"] if t is not None]
    if not chosen:
        return "–"
    t = Counter(chosen).most_common(1)[0][0]
    agg = np.median(dim.judges, axis=1)
    conf = confidence(dim.judges, dim, k)
    kept = kept_by(conf, t)
    agreed = agreement_within(agg, dim.consensus, k)
    return f"t={t:.2f}: {wilson(int(agreed[kept].sum()), int(kept.sum()))} (n={int(kept.sum())})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared" / "data")
    parser.add_argument("--splits", type=int, default=500)
    parser.add_argument("--cal", type=int, default=30)
    parser.add_argument("--seed", type=int, default=27)
    args = parser.parse_args()
    dims = load(args.data)
    records: dict[tuple[str, str], Record] = {}
    item_cost: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    item_calls: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    frameworks = list(dict.fromkeys(d.framework for d in dims))
    n_items = {f: len(next(d for d in dims if d.framework == f).consensus) for f in frameworks}
    for framework in frameworks:
        members = [d for d in dims if d.framework == framework]
        for cal, test in splits(n_items[framework], args.cal, args.splits, args.seed):
            stages: dict[int, list[np.ndarray]] = {k: [] for k in WITHIN}
            guaranteed: dict[int, list[np.ndarray]] = {k: [] for k in WITHIN}
            for dim in members:
                rec = records.setdefault((framework, dim.dimension), Record())
                conformal_split(dim, cal, test, rec)
                for k in WITHIN:
                    selective_split(dim, cal, test, k, rec)
                    stage, ok = cascade_split(dim, cal, test, k, rec)
                    stages[k].append(stage)
                    if ok:
                        guaranteed[k].append(stage)
            for k in WITHIN:
                # one call rates every dimension: Claude runs on an item when any of its
                # dimensions is unsure at stage 1
                # (a) over every dimension; (b) over the dimensions with a guaranteed cascade
                # in this split (the others go to a person whatever the panel says)
                for variant, rows in (("all", stages[k]), ("guaranteed", guaranteed[k])):
                    third = float(np.mean((np.vstack(rows) > 0).any(axis=0))) if rows else 0.0
                    item_calls[(framework, k, variant)].append(2 + third)
                    item_cost[(framework, k, variant)].append(
                        STAGE_COSTS[0] + STAGE_COSTS[1] * third
                    )
    n_cal = args.cal
    print(
        f"Splits: {args.splits} per framework (numpy default_rng([{args.seed}, split])); "
        f"{n_cal} calibration and {{n - {n_cal}}} test items of each framework's n = 50 "
        f"conversations (the independent units). Level 0.9 conformal; agreement target "
        f"{TARGET} with delta {DELTA}.\n"
    )
    print("### Conformal intervals (level 0.9; nonconformity |panel median - expert median|)\n")
    theory = coverage_share_probability(n_cal, 50 - n_cal, CONFORMAL_ALPHA)
    theory_pac = coverage_share_probability(n_cal, 50 - n_cal, CONFORMAL_ALPHA, DELTA)
    print(
        f"Theory for continuous scores (ties only raise it): share of splits with test "
        f"coverage >= 0.9 is {theory:.3f} (marginal), {theory_pac:.3f} (calibration-"
        f"conditional, delta {DELTA}).\n"
    )
    print(
        "| framework | dimension | marginal: mean cov | share >= 0.9 | mean width | "
        "PAC: mean cov | share >= 0.9 | width | Mondrian: mean cov | share >= 0.9 | width | "
        "cov unanimous / split | bins too few |"
    )
    print("|---" * 13 + "|")
    for (framework, dimension), rec in records.items():
        print(
            f"| {framework} | {dimension} | {fmt(rec.mean('marg_cov'))} | "
            f"{fmt(rec.share('marg_hit'), 2)} | {fmt(rec.mean('marg_width'), 2)} | "
            f"{fmt(rec.mean('pac_cov'))} | {fmt(rec.share('pac_hit'), 2)} | "
            f"{fmt(rec.mean('pac_width'), 2)} | {fmt(rec.mean('mond_cov'))} | "
            f"{fmt(rec.share('mond_hit'), 2)} | {fmt(rec.mean('mond_width'), 2)} | "
            f"{fmt(rec.mean('mond_cov_unanimous'))} / {fmt(rec.mean('mond_cov_split'))} | "
            f"{fmt(rec.share('mond_few'), 2)} |"
        )
    every = list(records.values())
    print(
        f"\nAll {len(every)} dimensions: marginal mean coverage "
        f"{statistics.fmean(r.mean('marg_cov') for r in every):.3f}, share of (split, "
        f"dimension) >= 0.9: {statistics.fmean(r.share('marg_hit') for r in every):.3f}, "
        f"mean width {statistics.fmean(r.mean('marg_width') for r in every):.2f}; Mondrian "
        f"mean width {statistics.fmean(r.mean('mond_width') for r in every):.2f}; PAC share "
        f">= 0.9: {statistics.fmean(r.share('pac_hit') for r in every):.3f}, width "
        f"{statistics.fmean(r.mean('pac_width') for r in every):.2f}.\n"
    )
    for k in WITHIN:
        label = "exact match" if k == 0 else f"within {k} level"
        print(f"### Selective trust and cascade: agreement = {label} with the expert median\n")
        print(
            "| framework | dimension | all items agree | full panel: guaranteed splits | "
            "coverage | violated: test / all 50 | pooled realised | all 50 at modal threshold "
            "(Wilson 95%) | cascade: guaranteed | coverage | by stage 1 | "
            "violated: test / all 50 | "
            "pooled realised | calls/item | cost/item vs full | Brier calibrated / base |"
        )
        print("|---" * 16 + "|")
        for (framework, dimension), rec in records.items():
            dim = next(d for d in dims if (d.framework, d.dimension) == (framework, dimension))
            statuses = Counter(rec.values[f"sel{k}_status"])
            cstatuses = Counter(rec.values[f"cas{k}_status"])
            kept = sum(rec.values[f"sel{k}_kept"])
            ckept = sum(rec.values[f"cas{k}_kept"])
            full = STAGE_COSTS[0] + STAGE_COSTS[1]
            print(
                f"| {framework} | {dimension} | {fmt(rec.mean(f'sel{k}_all'))} | "
                f"{statuses['guaranteed'] / args.splits:.2f} | "
                f"{fmt(rec.mean(f'sel{k}_coverage'), 2)} | "
                f"{fmt(rec.share(f'sel{k}_violated'), 3)} / "
                f"{fmt(rec.share(f'sel{k}_pop_violated'), 3)} | "
                f"{fmt(sum(rec.values[f'sel{k}_agree_kept']) / kept if kept else math.nan)} | "
                f"{full_data_check(dim, rec, k)} | "
                f"{cstatuses['guaranteed'] / args.splits:.2f} | "
                f"{fmt(rec.mean(f'cas{k}_coverage'), 2)} | {fmt(rec.mean(f'cas{k}_stage1'), 2)} | "
                f"{fmt(rec.share(f'cas{k}_violated'), 3)} / "
                f"{fmt(rec.share(f'cas{k}_pop_violated'), 3)} | "
                f"{fmt(sum(rec.values[f'cas{k}_agree_kept']) / ckept if ckept else math.nan)} | "
                f"{rec.mean(f'cas{k}_calls'):.2f} | "
                f"{rec.mean(f'cas{k}_cost') / full:.2f} | "
                f"{fmt(rec.mean(f'brier{k}'))} / {fmt(rec.mean(f'brier{k}_base'))} |"
            )
        print()
        for status in ("too_few_calibration_units", "no_threshold_passes"):
            where = [
                f"{d} ({Counter(r.values[f'sel{k}_status'])[status] / args.splits:.2f})"
                for (_, d), r in records.items()
                if Counter(r.values[f"sel{k}_status"])[status]
            ]
            print(f"- full panel `{status}`: {', '.join(where) or 'none'}")
        hits = [h for r in every for h in r.values[f"sel{k}_hit"] if h is not None]
        chits = [h for r in every for h in r.values[f"cas{k}_hit"] if h is not None]
        print(
            f"- violated (a guarantee given and realised agreement on the kept test items below "
            f"{TARGET}), share of all (split, dimension) pairs: full panel "
            f"{statistics.fmean(r.share(f'sel{k}_violated') for r in every):.4f} (worst "
            f"dimension {max(r.share(f'sel{k}_violated') for r in every):.3f}), cascade "
            f"{statistics.fmean(r.share(f'cas{k}_violated') for r in every):.4f} (worst "
            f"{max(r.share(f'cas{k}_violated') for r in every):.3f}); delta = {DELTA}"
        )
        print(
            f"- violated against the 50 items as the population (agreement of all 50 items "
            f"at the chosen threshold below {TARGET}): full panel "
            f"{statistics.fmean(r.share(f'sel{k}_pop_violated') for r in every):.4f} (worst "
            f"{max(r.share(f'sel{k}_pop_violated') for r in every):.3f}), cascade "
            f"{statistics.fmean(r.share(f'cas{k}_pop_violated') for r in every):.4f} (worst "
            f"{max(r.share(f'cas{k}_pop_violated') for r in every):.3f})"
        )
        print(
            f"- among guaranteed pairs with a kept test item, realised >= {TARGET} in "
            f"{sum(hits) / max(len(hits), 1):.3f} of {len(hits)} (full panel), "
            f"{sum(chits) / max(len(chits), 1):.3f} of {len(chits)} (cascade)"
        )
        print(
            f"- coverage (share of test items guaranteed), mean over dimensions: full panel "
            f"{statistics.fmean(r.mean(f'sel{k}_coverage') for r in every):.3f}, cascade "
            f"{statistics.fmean(r.mean(f'cas{k}_coverage') for r in every):.3f}"
        )
        full = STAGE_COSTS[0] + STAGE_COSTS[1]
        for framework in frameworks:
            parts = []
            for variant in ("all", "guaranteed"):
                calls = statistics.fmean(item_calls[(framework, k, variant)])
                cost = statistics.fmean(item_cost[(framework, k, variant)])
                parts.append(
                    f"{variant}: {calls:.2f} calls, ${cost * 1000:.2f} per 1000 items "
                    f"({cost / full:.2f} of the full panel)"
                )
            print(
                f"- {framework}, one call per judge rating every dimension, the third judge "
                f"called when any dimension is unsure at stage 1 ({'; '.join(parts)}); full "
                f"panel: 3 calls, ${full * 1000:.2f} per 1000 items"
            )
        print()


if __name__ == "__main__":
    main()
