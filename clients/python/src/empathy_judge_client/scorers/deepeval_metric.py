"""A DeepEval metric scored by the service (tested with deepeval 4.3.1; install it with
this package: ``pip install 'empathy-judge-client[deepeval]'``).

    from empathy_judge_client.scorers.deepeval_metric import EmpathyJudgeMetric
    metric = EmpathyJudgeMetric("epitome", url="http://127.0.0.1:8000", threshold=0.5)
    deepeval.evaluate([LLMTestCase(input=post, actual_output=reply)], [metric])

``score`` is the mean 0..1 value (1 best) of the chosen dimensions not flagged untrusted;
``success`` needs it at or above ``threshold`` (and, with ``require_trusted``, no untrusted
dimension); ``reason`` lists each dimension's score, flag, reasons and first rationale, and
says when the judges were simulated. ``verdicts`` keeps the per-dimension details.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

try:
    from deepeval.metrics import BaseMetric
    from deepeval.test_case import LLMTestCase
except ImportError as exc:  # pragma: no cover - the message is the point
    raise ImportError(
        "EmpathyJudgeMetric needs DeepEval: pip install 'empathy-judge-client[deepeval]'"
    ) from exc

from empathy_judge_client.aio import AsyncJudgeClient
from empathy_judge_client.scorers.verdicts import (
    Verdict,
    explanation,
    overall,
    shorthand_item,
    verdicts,
)
from empathy_judge_client.sync import JudgeClient
from empathy_judge_client.wire import CompletedScore


class EmpathyJudgeMetric(BaseMetric):  # type: ignore[misc]  # DeepEval ships no types
    """Scores ``test_case.input`` (the seeker's post) and ``actual_output`` (the reply)."""

    def __init__(
        self,
        rubric: str,
        *,
        url: str = "http://127.0.0.1:8000",
        key: str | None = None,
        dimensions: Sequence[str] | None = None,
        panel: str | None = None,
        threshold: float = 0.5,
        require_trusted: bool = False,
        wait: float = 120.0,
    ) -> None:
        self.rubric, self.url, self.key, self.panel = rubric, url, key, panel
        self.dimensions = list(dimensions) if dimensions else None
        self.threshold = threshold
        self.require_trusted = require_trusted
        self.wait = wait
        self.verdicts: list[Verdict] = []
        self.include_reason = True
        self.async_mode = True
        self.evaluation_model = f"empathy-judge ({rubric})"

    @property
    def __name__(self) -> str:  # DeepEval names a metric by this property
        return f"EmpathyJudge[{self.rubric}]"

    def _item(self, test_case: LLMTestCase) -> dict[str, Any]:
        return shorthand_item(str(test_case.input), str(test_case.actual_output))

    def _take(self, result: Any) -> float:
        if not isinstance(result, CompletedScore):
            self.error = f"not scored: {result.status} {result.error or ''}".strip()
            self.score, self.success, self.reason = 0.0, False, self.error
            return 0.0
        self.verdicts = verdicts(result, self.dimensions)
        value = overall(self.verdicts)
        untrusted = any(v.untrusted for v in self.verdicts)
        self.score = 0.0 if value is None else value
        self.success = (
            value is not None
            and value >= self.threshold
            and not (self.require_trusted and untrusted)
        )
        self.reason = explanation(result, self.verdicts)
        self.evaluation_cost = result.usage.cost_usd
        return self.score

    def measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        with JudgeClient(self.url, self.key) as client:
            result = client.score(
                self.rubric, self._item(test_case), wait=self.wait, panel=self.panel
            )
        return self._take(result)

    async def a_measure(self, test_case: LLMTestCase, *args: Any, **kwargs: Any) -> float:
        async with AsyncJudgeClient(self.url, self.key) as client:
            result = await client.score(
                self.rubric, self._item(test_case), wait=self.wait, panel=self.panel
            )
        return self._take(result)

    def is_successful(self) -> bool:
        return bool(self.success)
