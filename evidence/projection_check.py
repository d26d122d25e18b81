"""Does the calibration plan's CI projection hold on real ratings?

On the Kumar et al. (2025) release (the real Gemini 2.5 Pro, GPT-4o and Claude 3.7 Sonnet
ratings and three experts, 50 items per data set, 21 dimensions), per dimension and seed:
calibrate the panel (the median of the three LLMs, as the replay panel aggregates) against
the experts' median on n items, project the 95% bootstrap CI half-width of the full-scale
quadratic kappa to 2n items (x sqrt(1/2)), then measure it on 2n items (the n plus n more).

    uv run --dev python -m evidence.projection_check [--n 20] [--seeds 20] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import statistics
from dataclasses import dataclass
from pathlib import Path

from judge.reliability import (
    ProjectionCheck,
    bootstrap_kappa_ci,
    median_rater,
    projection_check,
    scale_kappa,
)
from judge.rubrics import RubricRegistry

KUMAR = Path("kumar2025-empathic-communication-judging") / "annotations"
LLMS = ("gemini", "gpt", "claude")
EXPERTS = ("expert1", "expert2", "expert3")
#: folder, rubric, id columns of the expert and Gemini files, id columns of the other LLMs'
FOLDERS = (
    ("epitome", "epitome", ("sp_id", "rp_id"), ("sp_id",)),
    ("empatheticdialogues", "empathetic-dialogues", ("conv_id",), ("conv_id",)),
    ("lend_an_ear", "lend-an-ear", ("conversation_id",), ("conversation_id",)),
    ("perceived_empathy", "perceived-empathy", ("id",), ("id",)),
)
RESAMPLES = 1000


@dataclass(frozen=True)
class Ratings:
    rubric: str
    dimension: str
    levels: list[float]
    panel: list[float | None]  # median of the three LLMs
    gold: list[float | None]  # median of the three experts


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in r.items() if k} for r in csv.DictReader(handle)]


def _number(text: str | None) -> float | None:
    return float(text) if text not in (None, "") else None


def kumar_ratings(data: Path) -> list[Ratings]:
    """Every dimension of the four data sets: the panel's and the experts' median per item."""
    registry = RubricRegistry.from_directory()
    out = []
    for folder, rubric_id, ids, llm_ids in FOLDERS:
        rubric = registry.get(rubric_id)
        names = rubric.dimension_names()
        root = data / KUMAR / folder
        gemini = _rows(root / "gemini_ratings.csv")
        llm = {
            name: {"|".join(r[c] for c in llm_ids): r for r in _rows(root / f"{name}_ratings.csv")}
            for name in LLMS
        }
        experts = {
            e: {"|".join(r[c] for c in ids): r for r in _rows(root / f"{e}_ratings.csv")}
            for e in EXPERTS
        }
        for column in (c for c in gemini[0] if c in names):
            dim = rubric.dimension(names[column])
            scale = dim.scale
            levels = [float(v) for v in range(scale.min, scale.max + 1)]  # type: ignore[union-attr]
            judges, gold_cols = [], []
            for name in LLMS:
                judges.append(
                    [_number(llm[name]["|".join(r[c] for c in llm_ids)][column]) for r in gemini]
                )
            for e in EXPERTS:
                gold_cols.append(
                    [_number(experts[e]["|".join(r[c] for c in ids)][column]) for r in gemini]
                )
            out.append(
                Ratings(rubric_id, dim.id, levels, median_rater(*judges), median_rater(*gold_cols))
            )
    return out


def check(ratings: Ratings, n: int, seeds: int) -> list[ProjectionCheck]:
    def interval(idx: list[int] | tuple[int, ...]) -> tuple[float, float, float]:
        pred = [ratings.panel[i] for i in idx]
        gold = [ratings.gold[i] for i in idx]
        low, high = bootstrap_kappa_ci(
            pred, gold, "quadratic", levels=ratings.levels, n_resamples=RESAMPLES, seed=1
        )
        return scale_kappa(pred, gold, ratings.levels), low, high

    return projection_check(interval, len(ratings.gold), n, range(seeds))


def summary(rows: list[ProjectionCheck]) -> dict[str, float]:
    ratio = [r.projected_2n / r.measured_2n for r in rows if r.measured_2n > 0]
    ratio_low = [
        r.projected_lower_2n / r.measured_lower_2n for r in rows if r.measured_lower_2n > 0
    ]
    return {
        "runs": len(rows),
        "half_n": statistics.mean(r.half_width_n for r in rows),
        "projected": statistics.mean(r.projected_2n for r in rows),
        "measured": statistics.mean(r.measured_2n for r in rows),
        "median_ratio": statistics.median(ratio),
        "projected_lower": statistics.mean(r.projected_lower_2n for r in rows),
        "measured_lower": statistics.mean(r.measured_lower_2n for r in rows),
        "median_ratio_lower": statistics.median(ratio_low),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared" / "data")
    args = parser.parse_args()
    every: list[ProjectionCheck] = []
    print(
        f"CI half-width of the panel's quadratic kappa: on n={args.n}, projected to "
        f"2n={2 * args.n}, measured on 2n; mean over {args.seeds} seeds"
    )
    print(f"{'rubric':21s} {'dimension':28s} {'h(n)':>6s} {'proj':>6s} {'meas':>6s} {'ratio':>6s}")
    for ratings in kumar_ratings(args.data):
        rows = check(ratings, args.n, args.seeds)
        every.extend(rows)
        s = summary(rows)
        print(
            f"{ratings.rubric:21s} {ratings.dimension:28s} {s['half_n']:6.3f} "
            f"{s['projected']:6.3f} {s['measured']:6.3f} {s['median_ratio']:6.2f}"
        )
    s = summary(every)
    print(
        f"all {s['runs']} runs: half-width projected {s['projected']:.3f} vs measured "
        f"{s['measured']:.3f} (median ratio {s['median_ratio']:.2f}); lower half-width "
        f"projected {s['projected_lower']:.3f} vs measured {s['measured_lower']:.3f} "
        f"(median ratio {s['median_ratio_lower']:.2f})"
    )


if __name__ == "__main__":
    main()
