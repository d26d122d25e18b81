"""What a habit scores on RESCUE's support target, with uniform and with marginal chance
(issue 23, part 10).

The labelled checkpoints of the RESCUE-BENCH subset (``../shared/data/rescue-bench``, built
by ``judge.labels.rescue`` as ``judge calibrate --rescue`` does) and three raters that
carry no information about the checkpoint: always the first-listed client, always the group
label (Couple/Family), and a random pick from the gold's own marginal over candidate
positions. Chance-corrected Recall@1 with chance = 1/k (today) and with chance from the
rater's own first choices (``judge.reliability.marginal_chance_recall_at_1``), with the
cluster bootstrap CI over sessions.

    uv run --group dev python -m evidence.rescue_chance [--data ../shared/data]
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from judge.domain.rubric import RankedScale
from judge.labels.rescue import load_rescue_items
from judge.reliability import bootstrap_ratio_ci, candidate_keys, marginal_chance_recall_at_1
from judge.rubrics import RubricRegistry

SUBSET = Path("rescue-bench") / "benchmark_subset.jsonl"


def _items(data: Path, rubric_id: str) -> tuple[list[list[str]], list[str], list[str], str]:
    rubric = RubricRegistry.from_directory().get(rubric_id)
    scale = rubric.dimension("support_target").scale
    assert isinstance(scale, RankedScale)
    candidates, gold, groups = [], [], []
    for raw in load_rescue_items(data / SUBSET, rubric):
        item: dict[str, Any] = raw["item"]
        labels = next(iter(raw["labels"].values()))
        if raw.get("given") or "support_target" not in labels:
            continue
        clients = tuple(p["id"] for p in item["participants"] if p.get("role") == "client")
        candidates.append(list(scale.label_ids(clients)))
        gold.append(labels["support_target"])
        groups.append(item["group"])
    assert scale.group_label is not None
    return candidates, gold, groups, scale.group_label


def uniform(
    first: Sequence[str],
    gold: Sequence[str],
    candidates: Sequence[Sequence[str]],
    groups: Sequence[str],
) -> tuple[float, float, float]:
    chance = [1 / len(c) for c in candidates]
    num = [float(f == g) - c for f, g, c in zip(first, gold, chance, strict=True)]
    den = [1 - c for c in chance]
    low, high = bootstrap_ratio_ci(num, den, groups=list(groups), n_resamples=2000, seed=1)
    return sum(num) / sum(den), low, high


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).parents[2] / "shared" / "data")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(4)
    for rubric_id in ("rescue-couple", "rescue-family"):
        candidates, gold, groups, group_label = _items(args.data, rubric_id)
        keys = [candidate_keys(c, [group_label]) for c in candidates]
        gold_keys = [k[c.index(g)] for k, c, g in zip(keys, candidates, gold, strict=True)]
        values, counts = np.unique([str(k) for k in gold_keys], return_counts=True)
        habit = dict(zip(values, counts / counts.sum(), strict=True))
        random_pick = []
        for k, c in zip(keys, candidates, strict=True):
            p = np.array([habit.get(str(x), 0.0) for x in k]) + 1e-12
            random_pick.append(c[int(rng.choice(len(c), p=p / p.sum()))])
        raters = {
            "first-listed client": [c[0] for c in candidates],
            f"always {group_label}": [group_label] * len(candidates),
            "random by the gold's marginal": random_pick,
        }
        print(f"{rubric_id}: {len(gold)} checkpoints in {len(set(groups))} sessions")
        for name, first in raters.items():
            u, ul, uh = uniform(first, gold, candidates, groups)
            m = marginal_chance_recall_at_1(
                first, gold, candidates, shared=[group_label], groups=groups, seed=1
            )
            print(
                f"  {name:30s} R@1 {m.recall_at_1:.3f}  uniform-corrected {u:+.3f} "
                f"[{ul:+.3f}, {uh:+.3f}]  marginal-corrected {m.value:+.3f} "
                f"[{m.low:+.3f}, {m.high:+.3f}] (chance {m.chance:.3f})"
            )


if __name__ == "__main__":
    main()
