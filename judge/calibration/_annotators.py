"""Agreement between the annotators of a labelling round, per dimension and pair: the
dimension's kappa (quadratic over the scale for ordinal ones, Cohen's otherwise, first choice
for ranked) on the items both labelled, with n, the independent units (groups) and a 95%
percentile bootstrap CI over those units."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from judge.calibration._rater_stats import RESAMPLE_SEED, agreement, finite
from judge.domain.rubric import Rubric
from judge.reliability import bootstrap_ci

RESAMPLES = 500


@dataclass(frozen=True)
class AnnotatorPair:
    dimension: str
    a: str
    b: str
    kappa: float | None
    n: int
    units: int
    ci95: tuple[float | None, float | None]


def annotator_agreement(
    rubric: Rubric, items: Sequence[dict[str, Any]], *, resamples: int = RESAMPLES
) -> list[AnnotatorPair]:
    """Every pair of annotators on every dimension both of them labelled at least once."""
    annotators = sorted({a for item in items for a in item["labels"]})
    pairs = []
    for dim in rubric.dimensions:
        if dim.scale.type == "free_text":
            continue
        for a, b in combinations(annotators, 2):
            both = [
                (item["labels"][a][dim.id], item["labels"][b][dim.id], _unit(item))
                for item in items
                if dim.id in item["labels"].get(a, {}) and dim.id in item["labels"].get(b, {})
            ]
            if not both:
                continue
            xs, ys, units = (list(column) for column in zip(*both, strict=True))
            low, high = bootstrap_ci(
                lambda x, y, d=dim: agreement(d, x, y),
                xs,
                ys,
                groups=units,
                n_resamples=resamples,
                seed=RESAMPLE_SEED,
            )
            pairs.append(
                AnnotatorPair(
                    dim.id,
                    a,
                    b,
                    finite(agreement(dim, xs, ys)),
                    len(both),
                    len(set(units)),
                    (finite(low), finite(high)),
                )
            )
    return pairs


def _unit(item: dict[str, Any]) -> str:
    return str(item["item"].get("group") or item["id"])
