"""Simulated experts for the demo's expert loop: they read a labelling task's conversation
(the same block the judges read) with the simulator's deterministic reading of the text, and
each departs from it on its own: with probability ``noise`` a label moves one level up or
down. They stand in for people only where no person can be asked, and every file and table
they appear in says SIMULATED.
"""

from __future__ import annotations

import random
from typing import Any

from judge.domain.rubric import Rubric
from judge.simulator.conversation import read_view
from judge.simulator.heuristics import heuristic_rating
from judge.simulator.schema import DimSpec

SIMULATED_EXPERT_PREFIX = "simulated-expert-"


def simulated_expert_labels(
    rubric: Rubric, conversation: str, expert: str, *, noise: float = 0.1, seed: int = 17
) -> dict[str, Any]:
    """One simulated expert's labels on the ordinal and binary dimensions of ``rubric``."""
    view = read_view([{"role": "user", "content": conversation}])
    rng = random.Random(f"{seed}:{expert}:{view.key}")
    labels: dict[str, Any] = {}
    for dim in rubric.dimensions:
        scale = dim.scale
        proscriptive = dim.polarity == "proscriptive"
        if scale.type == "ordinal":
            levels = tuple(range(scale.min, scale.max + 1))
            value, _ = heuristic_rating(
                DimSpec(dim.id, "ordinal", levels=levels), view, expert, proscriptive
            )
            if rng.random() < noise:
                value = min(scale.max, max(scale.min, value + rng.choice((-1, 1))))
            labels[dim.id] = value
        elif scale.type == "binary":
            value, _ = heuristic_rating(DimSpec(dim.id, "binary"), view, expert, proscriptive)
            labels[dim.id] = (not value) if rng.random() < noise else value
    return labels
