"""The Kumar et al. (2025) release as arrays: per framework and dimension, the three LLMs'
recorded ratings (Gemini 2.5 Pro, GPT-4o, Claude 3.7 Sonnet, in that order) and the three
experts' ratings, item-aligned (50 conversations per framework, 21 dimensions in all)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from evidence.projection_check import EXPERTS, FOLDERS, KUMAR, LLMS
from judge.rubrics import RubricRegistry

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Dimension:
    framework: str  # the rubric id
    dimension: str
    scale_min: int
    scale_max: int
    judges: FloatArray  # (items, 3): gemini, gpt, claude
    experts: FloatArray  # (items, 3)

    @property
    def levels(self) -> list[float]:
        return [float(v) for v in range(self.scale_min, self.scale_max + 1)]

    @property
    def consensus(self) -> FloatArray:
        """The experts' median per item (three experts: always a level)."""
        return np.asarray(np.median(self.experts, axis=1), dtype=np.float64)


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return [{k: v for k, v in r.items() if k} for r in csv.DictReader(handle)]


def _table(root: Path, name: str, cols: tuple[str, ...]) -> dict[str, dict[str, str]]:
    return {"|".join(r[c] for c in cols): r for r in _rows(root / f"{name}_ratings.csv")}


def load(data: Path) -> list[Dimension]:
    """Every dimension of the four data sets, in rubric order."""
    registry = RubricRegistry.from_directory()
    out: list[Dimension] = []
    for folder, rubric_id, ids, llm_ids in FOLDERS:
        rubric = registry.get(rubric_id)
        names = rubric.dimension_names()
        root = data / KUMAR / folder
        order = _rows(root / "gemini_ratings.csv")  # the item order (it has the full ids)

        llm = {name: _table(root, name, llm_ids) for name in LLMS}
        experts = {name: _table(root, name, ids) for name in EXPERTS}
        for column in (c for c in order[0] if c in names):
            dim = rubric.dimension(names[column])
            judges = [
                [float(llm[n]["|".join(r[c] for c in llm_ids)][column]) for n in LLMS]
                for r in order
            ]
            gold = [
                [float(experts[e]["|".join(r[c] for c in ids)][column]) for e in EXPERTS]
                for r in order
            ]
            scale = dim.scale
            out.append(
                Dimension(
                    rubric_id,
                    dim.id,
                    scale.min,  # type: ignore[union-attr]
                    scale.max,  # type: ignore[union-attr]
                    np.array(judges, dtype=np.float64),
                    np.array(gold, dtype=np.float64),
                )
            )
    return out
