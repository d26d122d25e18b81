"""Real expert pairs: how close do distinct annotators come to identical, and how wide is the
expert-expert baseline's interval (issue 23, part 6)?

Kumar et al.'s release: 3 experts x 21 dimensions x 50 conversations (63 pairs). Per pair
the exact agreement (the near-identical check's statistic); per dimension the expert
baseline (``judge.reliability.expert_baseline``: mean quadratic kappa over the three pairs on
the scale's levels, robust interval, 2,000 resamples, seed 0) against the floor 0.40.

    uv run --group dev python -m evidence.expert_pairs [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import csv
import itertools
from collections.abc import Sequence
from pathlib import Path

from judge.reliability import NEAR_IDENTICAL_AGREEMENT, expert_baseline

KUMAR = Path("kumar2025-empathic-communication-judging") / "annotations"
FOLDERS = {
    "epitome": (("sp_id", "rp_id"), [0, 1, 2]),
    "empatheticdialogues": (("conv_id",), [1, 2, 3, 4, 5]),
    "lend_an_ear": (("conversation_id",), [1, 2, 3, 4, 5]),
    "perceived_empathy": (("id",), [1, 2, 3, 4, 5, 6, 7]),
}
EXPERTS = ("expert1", "expert2", "expert3")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return [{k: v for k, v in r.items() if k} for r in csv.DictReader(handle)]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared" / "data")
    args = parser.parse_args(argv)
    agreements: list[tuple[float, str, str]] = []
    print(
        f"{'data set':20s} {'dimension':28s} {'n':>3s} {'kappa':>6s} {'95% CI':>16s} "
        f"{'lower1s':>7s} reasons (floor 0.40, line 0.58)"
    )
    for folder, (ids, levels) in FOLDERS.items():
        root = args.data / KUMAR / folder
        tables = {
            e: {"|".join(r[c] for c in ids): r for r in _rows(root / f"{e}_ratings.csv")}
            for e in EXPERTS
        }
        keys = sorted(tables["expert1"])
        dims = [
            c
            for c in next(iter(tables["expert1"].values()))
            if c not in ids and c != "full_conversation"
        ]
        for dim in dims:
            columns = {
                e: [
                    float(tables[e][k][dim]) if tables[e].get(k, {}).get(dim) else None
                    for k in keys
                ]
                for e in EXPERTS
            }
            for a, b in itertools.combinations(EXPERTS, 2):
                both = [
                    (x, y)
                    for x, y in zip(columns[a], columns[b], strict=True)
                    if x is not None and y is not None
                ]
                agreements.append((sum(x == y for x, y in both) / len(both), folder, dim))
            base = expert_baseline(columns, levels=levels)
            iv = base.interval
            assert iv is not None
            print(
                f"{folder:20s} {dim:28s} {iv.n:3d} {iv.estimate:6.3f} "
                f"[{iv.low:6.3f}, {iv.high:6.3f}] {iv.lower:7.3f} "
                f"{', '.join(base.reasons(0.40, 0.58)) or '-'}"
            )
    agreements.sort(reverse=True)
    top = ", ".join(f"{a:.2f} ({f}/{d})" for a, f, d in agreements[:3])
    print(
        f"{len(agreements)} expert pairs; highest exact agreement: {top}; "
        f"refused above {NEAR_IDENTICAL_AGREEMENT}"
    )


if __name__ == "__main__":
    main()
