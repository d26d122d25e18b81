"""Time of the calibration report on the Kumar replay, in process (issue 23, phase 4).

The four Kumar rubrics (21 dimensions, 50 conversations each, the three LLMs' recorded
ratings as judges, the three experts' labels), one ``calibration_report`` per rubric as
``POST /v1/calibrations`` builds it; prints seconds per rubric and in all (best of
``--repeat``). Run from the repository root:
``uv run python -m evidence.report_cost --data /work/shared/data``.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from evidence.kumar import Dimension, load
from evidence.projection_check import LLMS
from judge.calibration import ScoredItem, calibration_report
from judge.rubrics import RubricRegistry


def items_of(dims: Sequence[Dimension]) -> list[ScoredItem]:
    """One ScoredItem per conversation of a rubric's dimensions (judges: the three LLMs;
    the panel aggregate: their median)."""
    out = []
    for i in range(dims[0].judges.shape[0]):
        judges = {m: {d.dimension: float(d.judges[i, j]) for d in dims} for j, m in enumerate(LLMS)}
        labels = {
            f"expert{e + 1}": {d.dimension: float(d.experts[i, e]) for d in dims} for e in range(3)
        }
        aggregate = {d.dimension: statistics.median(d.judges[i].tolist()) for d in dims}
        out.append(ScoredItem(labels=labels, judges=judges, aggregate=aggregate, content=f"c{i}"))
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", type=Path, default=Path("/work/shared/data"))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    registry = RubricRegistry.from_directory()
    by_rubric: dict[str, list[Dimension]] = {}
    for dim in load(args.data):
        by_rubric.setdefault(dim.framework, []).append(dim)
    total = 0.0
    for rubric_id, dims in by_rubric.items():
        rubric = registry.get(rubric_id)
        items = items_of(dims)
        times = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            calibration_report(rubric, items, list(LLMS), "bench")
            times.append(time.perf_counter() - start)
        total += min(times)
        print(f"{rubric_id:24s} {len(dims):2d} dims {min(times):6.2f} s")
    print(f"{'all':24s} {sum(map(len, by_rubric.values())):2d} dims {total:6.2f} s")


if __name__ == "__main__":
    main()
