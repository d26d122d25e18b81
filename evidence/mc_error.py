"""Monte Carlo error of the deciding bound (issue 23, part 11).

Real calibrations: Kumar et al.'s Lend an Ear and Perceived Empathy dimensions (15), the
panel = the median of Gemini 2.5 Pro, GPT-4o and Claude 3.7 Sonnet against the median of
the three experts, 50 conversations (independent units). Per dimension, the one-sided 95%
lower bound of the quadratic kappa (percentile part of the gate's interval, where the
resampling error lives) is computed with ``--seeds`` seeds at 500 and at 2,000 resamples,
and with 100,000 resamples as the reference ("infinitely many"). Reported: the spread of the
bound across seeds (max - min), the mean Monte Carlo error the interval states
(``KappaInterval.lower_mc``, half-width of the order-statistic interval), and how often the
stated Monte Carlo interval contains the reference bound (nominal 95%).

    uv run --group dev python -m evidence.mc_error [--seeds 50] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import statistics
from collections.abc import Sequence
from pathlib import Path

from judge.reliability import kappa_interval, median_rater

KUMAR = Path("kumar2025-empathic-communication-judging") / "annotations"
FOLDERS = {"lend_an_ear": ("conversation_id", 5), "perceived_empathy": ("id", 7)}
LLMS = ("gemini", "gpt", "claude")
EXPERTS = ("expert1", "expert2", "expert3")


def _table(path: Path, key: str) -> dict[str, dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return {r[key]: r for r in csv.DictReader(handle)}


def dimensions(data: Path) -> list[tuple[str, list[float], list[float], list[float]]]:
    out = []
    for folder, (key, top) in FOLDERS.items():
        root = data / KUMAR / folder
        raters = {name: _table(root / f"{name}_ratings.csv", key) for name in LLMS + EXPERTS}
        ids = sorted(raters["expert1"])
        columns = [c for c in next(iter(raters["expert1"].values())) if c and c != key]
        for dim in columns:
            cols = {
                n: [float(raters[n][i][dim]) if raters[n][i][dim] else None for i in ids]
                for n in LLMS + EXPERTS
            }
            panel = median_rater(*(cols[n] for n in LLMS))
            gold = median_rater(*(cols[n] for n in EXPERTS))
            levels = [float(v) for v in range(1, top + 1)]
            out.append((f"{folder}/{dim}", panel, gold, levels))  # type: ignore[arg-type]
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=50)
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared" / "data")
    args = parser.parse_args(argv)
    print(f"{'dimension':42s} {'ref':>6s} | {'B':>5s} {'spread':>6s} {'stated':>6s} {'covers':>6s}")
    totals: dict[int, list[tuple[float, float, bool]]] = {500: [], 2000: []}
    for name, panel, gold, levels in dimensions(args.data):
        reference = kappa_interval(
            panel, gold, levels=levels, method="percentile", n_resamples=100_000, seed=999
        ).lower
        for b in (500, 2000):
            runs = [
                kappa_interval(
                    panel, gold, levels=levels, method="percentile", n_resamples=b, seed=s
                )
                for s in range(args.seeds)
            ]
            bounds = [r.lower for r in runs]
            stated = [r.lower_mc.error for r in runs if r.lower_mc]
            covers = [r.lower_mc.contains(reference) for r in runs if r.lower_mc]
            spread = max(bounds) - min(bounds)
            totals[b].append((spread, statistics.mean(stated), statistics.mean(covers)))
            print(
                f"{name:42s} {reference:6.3f} | {b:5d} {spread:6.3f} "
                f"{statistics.mean(stated):6.3f} {statistics.mean(covers):6.2f}",
                flush=True,
            )
    for b, rows in totals.items():
        print(
            f"B={b}: spread across {args.seeds} seeds max {max(r[0] for r in rows):.3f}, mean "
            f"{statistics.mean(r[0] for r in rows):.3f}; stated Monte Carlo error mean "
            f"{statistics.mean(r[1] for r in rows):.3f}; the stated interval contains the "
            f"100,000-resample bound in {statistics.mean(r[2] for r in rows):.1%} of runs"
        )


if __name__ == "__main__":
    main()
