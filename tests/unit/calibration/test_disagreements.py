"""The calibration items where the panel and the experts disagree most."""

from __future__ import annotations

from judge.calibration import ScoredItem, largest_disagreements


def _item(panel: dict[str, object], labels: dict[str, dict[str, object]]) -> ScoredItem:
    return ScoredItem(labels=labels, judges={"j1": dict(panel)}, aggregate=dict(panel))


def test_the_largest_gaps_come_first_and_agreement_is_left_out() -> None:
    items = [
        _item({"er": 1, "kind": "a"}, {"e1": {"er": 1, "kind": "a"}, "e2": {"er": 1}}),
        _item({"er": 0, "kind": "b"}, {"e1": {"er": 2, "kind": "a"}, "e2": {"er": 2, "kind": "b"}}),
        _item({"er": None}, {"e1": {"er": 2}}),  # no panel score: coverage, not a gap
        _item({"er": 2}, {"e1": {"er": 1}, "e2": {"er": 2}, "e3": {"er": 1}}),
    ]
    found = largest_disagreements(items)
    assert [(d.index, d.dimension, d.gap) for d in found] == [
        (1, "er", 2.0),  # 0 against a median of 2
        (3, "er", 1.0),
        (1, "kind", 0.5),  # one of two experts said otherwise
    ]
    assert found[0].experts == {"e1": 2, "e2": 2}
    assert found[0].judges == {"j1": 0}
    assert len(largest_disagreements(items, limit=1)) == 1
