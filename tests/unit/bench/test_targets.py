"""The bench's target table decides each comparison as written: a goal of ``<= 0.5`` is met
by 0.491 and by 0.5 itself (it was once read as ``== 0.5``)."""

from __future__ import annotations

from typing import Any

import pytest

from judge.bench.report import evaluate_targets


def _met(results: dict[str, Any], name: str) -> bool | None:
    (row,) = [t for t in evaluate_targets(results) if t["target"].startswith(name)]
    met: bool | None = row["met"]
    return met


@pytest.mark.parametrize(("ratio", "met"), [(0.491, True), (0.5, True), (0.51, False)])
def test_at_most_is_met_below_and_at_the_goal(ratio: float, met: bool) -> None:
    results = {"cost_prompt_cache": {"ratio": ratio}}
    assert _met(results, "cost per item with prompt caching") is met


@pytest.mark.parametrize(("cpu_ms", "met"), [(5.2, True), (8.0, True), (8.6, False)])
def test_service_cpu_per_item_is_a_target(cpu_ms: float, met: bool) -> None:
    results = {"batch": {"embedded": {"service_cpu_ms_per_item": cpu_ms}}}
    assert _met(results, "service CPU per item") is met


def test_a_measure_not_taken_is_neither_met_nor_missed() -> None:
    assert _met({}, "batch throughput / raw HTTP ceiling") is None
