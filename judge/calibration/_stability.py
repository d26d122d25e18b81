"""Intra-judge stability and call cost of a calibration run (panel option ``samples``).

For every judge with k > 1 samples and every dimension: the share of items whose samples are
all identical, and Krippendorff's alpha across samples (sample index as the rater, items as
units; ordinal level on ordinal scales, nominal otherwise, the top choice of a ranked list).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

from judge.calibration._scored import ScoredItem
from judge.domain.calibration_report import CallCost, JudgeStability
from judge.domain.rubric import Rubric
from judge.reliability import bootstrap_ci, krippendorff_alpha


class _Panel(Protocol):
    def calls_per_item(self) -> int: ...


def _comparable(value: Any) -> Any:
    if isinstance(value, list):
        return value[0] if value else None
    return value


RESAMPLES = 300


def _alpha(level_domain: list[Any] | None, rows: Sequence[list[Any]]) -> float:
    """Alpha with the sample index as the rater and items as units."""
    k = max(len(r) for r in rows)
    matrix = [[_comparable(r[j]) if j < len(r) else None for r in rows] for j in range(k)]
    try:
        if level_domain is not None:
            return krippendorff_alpha(matrix, "ordinal", value_domain=level_domain)
        return krippendorff_alpha(matrix, "nominal")
    except ValueError:
        return math.nan


def _rounded(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 4)


def _stability(level_domain: list[Any] | None, rows: list[list[Any]]) -> JudgeStability:
    identical = [float(len({repr(v) for v in r}) == 1) for r in rows]
    alpha = _alpha(level_domain, rows)
    low, high = bootstrap_ci(
        lambda drawn: _alpha(level_domain, drawn), rows, n_resamples=RESAMPLES, seed=0
    )
    share_low, share_high = bootstrap_ci(
        lambda drawn: sum(drawn) / len(drawn), identical, n_resamples=RESAMPLES, seed=0
    )
    return JudgeStability(
        n_items=len(rows),
        samples=max(len(r) for r in rows),
        share_identical=round(sum(identical) / len(rows), 4),
        share_identical_ci95=(_rounded(share_low), _rounded(share_high)),
        # None when every sample of every item agrees (alpha is 0/0): perfectly stable
        alpha=_rounded(alpha),
        alpha_ci95=(_rounded(low), _rounded(high)),
    )


def intra_judge_stability(
    rubric: Rubric, items: Sequence[ScoredItem]
) -> dict[str, dict[str, JudgeStability]]:
    """dimension -> judge -> stability; empty when no judge took more than one sample."""
    out: dict[str, dict[str, JudgeStability]] = {}
    for dim in rubric.dimensions:
        if dim.scale.type == "free_text":
            continue
        domain = (
            list(range(dim.scale.min, dim.scale.max + 1)) if dim.scale.type == "ordinal" else None
        )
        judges = sorted({m for it in items for m, d in it.judge_samples.items() if dim.id in d})
        for model in judges:
            rows = [
                it.judge_samples[model][dim.id]
                for it in items
                if dim.id in it.judge_samples.get(model, {})
            ]
            if rows:
                out.setdefault(dim.id, {})[model] = _stability(domain, rows)
    return out


def call_cost(panel: _Panel, items: Sequence[ScoredItem]) -> CallCost:
    """Calls per item: what the panel's composition costs (samples x judges) and what the run
    actually made (repairs add calls, cache hits remove them)."""
    made = sum(it.llm_calls for it in items)
    return CallCost(
        calls_per_item=panel.calls_per_item(),
        measured_calls_per_item=round(made / len(items), 3) if items else None,
        n_items=len(items),
    )
