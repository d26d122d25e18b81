"""Simulated experts: the simulator's reading of a task's conversation, each expert departing
from it on its own, reproducibly."""

from __future__ import annotations

from judge.bench.workload import synthetic_items
from judge.domain.item import parse_item
from judge.domain.render import render_conversation
from judge.rubrics import RubricRegistry
from judge.simulator.experts import simulated_expert_labels

EPITOME = RubricRegistry.from_directory().get("epitome")
CONVERSATIONS = [
    render_conversation(parse_item(raw), EPITOME.unit) for raw in synthetic_items(40, tag="x")
]


def _labels(expert: str, noise: float) -> list[dict[str, object]]:
    return [simulated_expert_labels(EPITOME, c, expert, noise=noise) for c in CONVERSATIONS]


def test_labels_are_on_the_scale_and_reproducible() -> None:
    first = _labels("simulated-expert-1", 0.1)
    assert first == _labels("simulated-expert-1", 0.1)
    for labels in first:
        assert set(labels) == {"emotional_reactions", "interpretations", "explorations"}
        assert all(value in (0, 1, 2) for value in labels.values())
    assert len({labels["explorations"] for labels in first}) > 1  # not a constant reading


def test_without_noise_experts_agree_and_with_noise_they_differ_somewhere() -> None:
    assert _labels("a", 0.0) == _labels("b", 0.0)
    assert _labels("a", 0.3) != _labels("b", 0.3)
