"""An Inspect AI scorer scored by the service (tested with inspect-ai 0.3.285; install it with
this package: ``pip install 'empathy-judge-client[inspect-ai]'``).

    from empathy_judge_client.scorers.inspect_ai_scorer import empathy_judge
    Task(dataset=..., solver=generate(), scorer=empathy_judge("epitome", url=URL))

Each sample's ``Score`` holds one value per dimension (its score) and ``overall`` (the mean
0..1 value, 1 best, of the dimensions not flagged untrusted); ``explanation`` and
``metadata`` carry each dimension's flag, reasons and the judges' rationales. The metric
:func:`trusted_mean` averages each dimension over the samples where it was not flagged
untrusted: untrusted dimensions are marked, never averaged in.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

try:
    from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
    from inspect_ai.solver import TaskState
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(
        "empathy_judge() needs Inspect AI: pip install 'empathy-judge-client[inspect-ai]'"
    ) from exc

from empathy_judge_client.aio import AsyncJudgeClient
from empathy_judge_client.scorers.verdicts import explanation, overall, shorthand_item, verdicts
from empathy_judge_client.wire import CompletedScore

OVERALL = "overall"


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


@metric  # type: ignore[untyped-decorator]  # Inspect's decorators are typed; mypy sees Any here
def trusted_mean() -> Metric:
    """Per dimension (and ``overall``): the mean over the samples where the dimension was
    scored and not flagged untrusted."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        kept: dict[str, list[float]] = {}
        for sample in scores:
            value = sample.score.value
            flags = (sample.score.metadata or {}).get("flags", {})
            if not isinstance(value, dict):
                continue
            for name, raw in value.items():
                number = _number(raw)
                if number is not None and flags.get(name) != "untrusted":
                    kept.setdefault(name, []).append(number)
        return {name: statistics.fmean(values) for name, values in kept.items()}

    return compute


@scorer(metrics=[trusted_mean()])  # type: ignore[untyped-decorator]
def empathy_judge(
    rubric: str,
    *,
    url: str = "http://127.0.0.1:8000",
    key: str | None = None,
    dimensions: Sequence[str] | None = None,
    panel: str | None = None,
    item: Callable[[TaskState], dict[str, Any]] | None = None,
    wait: float = 120.0,
) -> Scorer:
    """Score each sample's output (the reply to its input) with ``rubric``; ``item`` builds
    another item from the state (a conversation, a chosen turn as ``focus``)."""

    async def score(state: TaskState, target: Target) -> Score:
        built = item(state) if item else shorthand_item(state.input_text, state.output.completion)
        async with AsyncJudgeClient(url, key) as client:
            result = await client.score(rubric, built, wait=wait, panel=panel)
        if not isinstance(result, CompletedScore):
            return Score(
                value={OVERALL: math.nan},
                explanation=f"not scored: {result.status} {result.error or ''}".strip(),
                metadata={"score_id": result.id, "status": result.status},
            )
        found = verdicts(result, dimensions)
        total = overall(found)
        value: dict[str, Any] = {v.dimension: v.score for v in found}
        value[OVERALL] = math.nan if total is None else total
        return Score(
            value=value,
            explanation=explanation(result, found),
            metadata={
                "score_id": result.id,
                "simulated": result.simulated,
                "flags": {v.dimension: v.flag for v in found},
                "dimensions": {
                    v.dimension: {
                        "score": v.score,
                        "flag": v.flag,
                        "reasons": list(v.reasons),
                        "rationales": list(v.rationales),
                    }
                    for v in found
                },
            },
        )

    return score
